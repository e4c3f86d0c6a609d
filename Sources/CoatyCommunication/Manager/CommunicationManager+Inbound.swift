import CoatyCore
import CoatyModel
import Synchronization

/// A decoded inbound Coaty event.
enum InboundEvent: Sendable {
    case advertise(AdvertiseEvent)
    case deadvertise(DeadvertiseEvent)
    case channel(ChannelEvent)
    case discover(DiscoverEvent)
    case resolve(ResolveEvent)
    case query(QueryEvent)
    case retrieve(RetrieveEvent)
    case update(UpdateEvent)
    case complete(CompleteEvent)
    case call(CallEvent)
    case `return`(ReturnEvent)
    case associate(AssociateEvent)
}

extension CommunicationManager {
    /// Routes one inbound message: called by the transport, synchronously, in order of arrival.
    func receive(_ message: TransportMessage) {
        let (receivers, autoResolve) = self.state.withLock { state in
            (
                state.routing.receivers(of: message.topic),
                state.routing.permanentFilters.contains { $0.matches(message.topic) }
            )
        }
        guard !receivers.isEmpty || autoResolve else { return }
        var coatyTopic = CoatyTopic(parsing: message.topic)
        var event: InboundEvent?
        if autoResolve || receivers.contains(where: { $0.kind == .coaty }) {
            guard let code = coatyTopic?.code else {
                self.report(.init(kind: .invalidInboundEvent, topic: message.topic, reason: "malformed Coaty topic"))
                return
            }
            // An event takes its topic over (its origin holds the topic's parts), so the delivery keeps
            // the parsed topic only when nothing was decoded (IO values, the one case that reads it).
            // Moving instead of copying saves retaining each of its strings, about ten for a Call.
            if code != .ioValue, let topic = coatyTopic.take() {
                let responseRoute = code.isTwoWay && !code.isResponse ? self.responseRoute(for: topic) : nil
                do {
                    event = try InboundEvent.decode(
                        message,
                        topic: consume topic,
                        family: self.configuration.objectFamily,
                        responseRoute: responseRoute
                    )
                } catch {
                    self.report(.init(kind: .invalidInboundEvent, topic: message.topic, reason: error.message))
                    return
                }
                for reason in event?.unusableValues ?? [] {
                    self.report(.init(kind: .unusableValue, topic: message.topic, reason: reason))
                }
            }
        }
        let delivery = Delivery(topic: message.topic, coatyTopic: coatyTopic, payload: message.payload, event: event)
        for receiver in receivers { receiver.receiver.deliver(delivery) }
        if autoResolve, case .discover(let discover)? = delivery.event { self.autoResolve(discover) }
    }

    /// Gives a received request the way to answer it.
    func responseRoute(for topic: CoatyTopic) -> ResponseRoute? {
        guard let correlationID = topic.correlationID else { return nil }
        return ResponseRoute(correlationID: correlationID) { [weak self] code, payload throws(CommunicationError) in
            guard let self else { throw CommunicationError(.notRunning, "the communication manager is gone") }
            let responseTopic = CoatyTopic(
                namespace: self.namespace,
                code: code,
                sourceID: self.identity.objectID,
                correlationID: correlationID
            )
            self.enqueue([TransportMessage(topic: responseTopic.formatted, payload: payload)], directly: true)
        }
    }

    /// Resolves Discovers for the agent's identity and IO nodes (protocol §6.4).
    private func autoResolve(_ discover: DiscoverEvent) {
        let identity = self.identity
        let matchesIdentity =
            (discover.isDiscoveringTypes && discover.isCoreTypeCompatible(.identity))
            || (discover.isDiscoveringObjectID && discover.objectID == identity.objectID)
        if matchesIdentity { try? discover.resolve(ResolveEvent(object: identity)) }
        if discover.isDiscoveringTypes && discover.isCoreTypeCompatible(.ioNode) {
            for node in self.configuration.ioNodes { try? discover.resolve(ResolveEvent(object: node)) }
        }
    }

    /// Publishes messages by queueing them for ``run()``, reporting any dropped from a full outbox;
    /// with `directly`, from the calling task instead while online and idle.
    ///
    /// Requests and responses go directly: a round trip then needs no hand-off to either manager's
    /// send loop, which is most of its latency. One-way events are queued, so a task publishing many
    /// of them encodes the next while the send loop delivers the last. Either way a task's
    /// publications keep their order (see `ManagerState.directPublishConnection`).
    ///
    /// A message the connection cannot take without waiting, or refuses with an error, is queued with
    /// everything after it, so the send loop publishes it (or reports its error) in order.
    func enqueue(_ messages: [TransportMessage], directly: Bool = false) {
        if directly, let connection = self.state.withLock({ $0.directPublishConnection }) {
            self.enqueue(messages, on: connection)
        } else {
            self.enqueue(messages[...])
        }
    }

    /// Publishes messages on `connection`, taken as `ManagerState.directPublishConnection`, from the
    /// calling task; queues the first it cannot take without waiting, and everything after it.
    func enqueue(_ messages: [TransportMessage], on connection: any TransportConnection) {
        var start = messages.startIndex
        while start < messages.endIndex, (try? connection.publishWithoutWaiting(messages[start])) == true {
            start += 1
        }
        if start < messages.endIndex { self.enqueue(messages[start...]) }
    }

    /// Queues messages for ``run()``, reporting any dropped from a full outbox.
    private func enqueue(_ messages: ArraySlice<TransportMessage>) {
        let dropped = self.state.withLock { state -> [TransportMessage] in
            messages.compactMap { state.outbox.append($0) }
        }
        for message in dropped {
            self.report(
                .init(
                    kind: .droppedPublication,
                    topic: message.topic,
                    reason: "outbox full (capacity \(self.configuration.outboxCapacity)); oldest publication dropped"
                )
            )
        }
        self.doorbell.ring()
    }

    /// Registers an observation of a route; see ``observe(filter:kind:_:)``.
    func observe<Event: Sendable>(_ route: EventRoute<Event>) async -> EventStream<Event> {
        await self.observe(filter: route.filter, route.select)
    }

    /// Registers an observation and returns once its subscription is in place (when online) or
    /// registered for the next connect (when offline).
    func observe<Event: Sendable>(
        filter: TopicFilter,
        kind: RouteKind = .coaty,
        _ transform: @escaping @Sendable (Delivery) -> Event?
    ) async -> EventStream<Event> {
        await self.observe(filters: [filter], kind: kind, transform).stream
    }

    func observe<Event: Sendable>(
        filters: [TopicFilter],
        kind: RouteKind = .coaty,
        _ transform: @escaping @Sendable (Delivery) -> Event?
    ) async -> (stream: EventStream<Event>, continuation: EventStream<Event>.Continuation) {
        let (stream, continuation, receiver) = self.makeObservation(transform)
        let (ids, toSubscribe) = self.addObservers(filters: filters, kind: kind, receiver: receiver)
        continuation.onTermination { [weak self] in self?.removeObservers(ids) }
        await self.subscribe(toSubscribe)
        await self.waitForPendingSubscriptions(of: filters)
        return (stream, continuation)
    }

    /// Observes a request's responses, then publishes the request, and returns the responses' stream.
    ///
    /// The response filters (one correlation id each) are subscribed before the request is
    /// published, so no response is missed. While online and idle this all happens from the calling
    /// task, with one lock: the routes are added, their subscriptions claimed and handed to the
    /// connection without waiting for its confirmation (it goes out ahead of the request, so it is in
    /// place before any response can exist; see ``TransportConnection/subscribeWithoutWaiting(to:)``),
    /// and the connection to publish on taken. Otherwise each step falls back to what
    /// ``subscribe(_:forResponses:)`` and ``enqueue(_:directly:)`` do. Releasing the response
    /// filters may wait for a batch (see ``removeObservers(_:deferringUnsubscribe:)``).
    func request<Event: Sendable>(
        _ messages: [TransportMessage],
        responseFilters filters: [TopicFilter],
        _ transform: @escaping @Sendable (Delivery) -> Event?
    ) async -> EventStream<Event> {
        let (stream, continuation, receiver) = self.makeObservation(transform)
        let registration = self.state.withLock { state in
            let added = state.routing.add(filters, kind: .coaty, receiver: receiver)
            var registration = RequestRegistration(ids: added.ids, publishConnection: state.directPublishConnection)
            for filter in added.toSubscribe {
                switch state.claimDirectSubscription(of: filter, forResponses: true) {
                case .claimed(let connection, _):
                    registration.claimed.append(filter)
                    registration.subscribeConnection = connection
                case .alreadyClaimed:
                    break  // a reused correlation id, already being subscribed
                case .unavailable:
                    registration.queued.append(filter)
                }
            }
            return registration
        }
        let ids = registration.ids
        continuation.onTermination { [weak self] in self?.removeObservers(ids, deferringUnsubscribe: true) }
        var toSubscribe = registration.queued
        // The connection taken under the lock serves only if nothing suspended since.
        var publishConnection = registration.publishConnection
        if let connection = registration.subscribeConnection {
            switch await self.subscribeClaimed(registration.claimed, on: connection, withoutWaiting: true) {
            case .handedOver:
                break
            case .confirmed:
                publishConnection = nil
            case .failed:
                toSubscribe = registration.claimed + toSubscribe
            }
        }
        if !toSubscribe.isEmpty {
            await self.subscribe(toSubscribe, forResponses: true)
            publishConnection = nil
        }
        if let publishConnection {
            self.enqueue(messages, on: publishConnection)
        } else {
            self.enqueue(messages, directly: true)
        }
        return stream
    }

    /// What ``request(_:responseFilters:_:)`` registered under the lock.
    private struct RequestRegistration {
        let ids: [ObserverID]
        /// Response filters claimed for subscribing on `subscribeConnection` from the calling task.
        var claimed: [TopicFilter] = []
        var subscribeConnection: (any TransportConnection)?
        /// Response filters that have to wait for the send loop.
        var queued: [TopicFilter] = []
        /// The connection to publish the request on from the calling task, if it may.
        let publishConnection: (any TransportConnection)?

        init(ids: [ObserverID], publishConnection: (any TransportConnection)?) {
            self.ids = ids
            self.publishConnection = publishConnection
        }
    }

    /// How ``subscribeClaimed(_:on:)`` went.
    private enum ClaimedSubscription {
        /// Handed to the connection without suspending.
        case handedOver
        /// Subscribed after waiting for the connection's confirmation.
        case confirmed
        /// Failed: the claims are released, and the filters have to be queued for the send loop.
        case failed
    }

    /// Subscribes filters claimed with `ManagerState.claimDirectSubscription(of:)` on `connection`
    /// from the calling task; with `withoutWaiting`, without waiting for the connection's confirmation
    /// when it can take them so.
    private func subscribeClaimed(
        _ filters: [TopicFilter],
        on connection: any TransportConnection,
        withoutWaiting: Bool
    ) async -> ClaimedSubscription {
        do {
            if withoutWaiting, try connection.subscribeWithoutWaiting(to: filters) { return .handedOver }
            try await connection.subscribe(to: filters)
            return .confirmed
        } catch {
            self.state.withLock { state in
                for filter in filters { state.routing.releaseSubscribeClaim(filter) }
            }
            return .failed
        }
    }

    /// Ends the subscription of `filter` claimed with `ManagerState.claimSubscription(of:)` and its
    /// `signal`, done or failed: the observations waiting for it (``waitForPendingSubscriptions(of:)``)
    /// go on. The entry is removed only if it is still this claim's.
    func endSubscribing(_ filter: TopicFilter, _ signal: OneShotSignal) {
        self.state.withLock { state in
            if state.subscribing[filter] === signal { state.subscribing[filter] = nil }
        }
        signal.fire()
    }

    /// Waits until no subscription of `filters` that another task or the send loop claimed is still
    /// waiting for its confirmation, so that an observation returns with its subscription in place even
    /// when it found the filter already claimed (unless that subscription failed with the connection:
    /// the next connection then subscribes it, as for an observation made offline). Cancellation ends
    /// the wait, as in ``subscribe(_:forResponses:)``.
    func waitForPendingSubscriptions(of filters: [TopicFilter]) async {
        for filter in filters {
            while let signal = self.state.withLock({ $0.subscribing[filter] }) {
                await signal.wait()
                if Task.isCancelled { return }
            }
        }
    }

    /// A stream, its producer's side, and the routing-table receiver that feeds it through `transform`.
    private func makeObservation<Event: Sendable>(
        _ transform: @escaping @Sendable (Delivery) -> Event?
    ) -> (stream: EventStream<Event>, continuation: EventStream<Event>.Continuation, receiver: ObserverReceiver) {
        let (stream, continuation) = EventStream<Event>.makeStream(
            bufferingNewest: self.configuration.observerBufferSize
        )
        let receiver = ObserverReceiver(
            deliver: { [weak self] delivery in
                guard let event = transform(delivery) else { return }
                if case .dropped = continuation.yield(event) {
                    self?.report(
                        .init(
                            kind: .droppedEvent,
                            topic: delivery.topic,
                            reason: "observer buffer full; oldest event dropped"
                        )
                    )
                }
            },
            finish: { continuation.finish() }
        )
        return (stream, continuation, receiver)
    }

    /// Adds one routing entry per filter for `receiver`. Returns their ids and the filters that are not
    /// subscribed yet, for ``subscribe(_:forResponses:)``.
    func addObservers(
        filters: [TopicFilter],
        kind: RouteKind,
        receiver: ObserverReceiver
    ) -> (ids: [ObserverID], toSubscribe: [TopicFilter]) {
        let added = self.state.withLock { $0.routing.add(filters, kind: kind, receiver: receiver) }
        return (added.ids, Array(added.toSubscribe))
    }

    /// Subscribes filters and returns once the subscriptions are in place (when online) or registered
    /// for the next connect (when offline).
    ///
    /// With `forResponses` (a request's response filters, subscribed right before the request is
    /// published) a subscription the connection takes without waiting
    /// (``TransportConnection/subscribeWithoutWaiting(to:)``) counts as in place: it goes out ahead of
    /// the request, so it is in place before any response can exist.
    func subscribe(_ filters: [TopicFilter], forResponses: Bool = false) async {
        for filter in filters {
            if await self.subscribeDirectly(filter, forResponses: forResponses) { continue }
            let waiter = OneShotSignal()
            let queued = self.state.withLock { state -> Bool in
                guard state.acceptsControl else { return false }
                state.control.append(.subscribe(filter, waiter))
                return true
            }
            guard queued else { continue }
            self.doorbell.ring()
            // Cancellation ends the wait, so an observation never outlasts its task's cancellation while
            // a connection keeps its subscribe pending; the queued subscription is still made.
            await waiter.wait()
        }
    }

    /// Subscribes `filter` from the calling task when online and idle (see
    /// `ManagerState.directSubscribeConnection(for:)`). Returns `false` when the subscription has to be queued for
    /// ``run()``: offline, busy, or the direct attempt failed (the send loop then retries it, or
    /// reconnects). A request's response filter (`forResponses`) is handed over without waiting for the
    /// confirmation, and its claim is not registered for other observers to wait on.
    private func subscribeDirectly(_ filter: TopicFilter, forResponses: Bool) async -> Bool {
        switch self.state.withLock({ $0.claimDirectSubscription(of: filter, forResponses: forResponses) }) {
        case .claimed(let connection, let signal):
            let result = await self.subscribeClaimed([filter], on: connection, withoutWaiting: forResponses)
            if let signal { self.endSubscribing(filter, signal) }
            return result != .failed
        case .alreadyClaimed:
            return true
        case .unavailable:
            return false
        }
    }

    /// How many released response subscriptions may wait for a batch before the send loop is woken.
    static let deferredUnsubscribeBatch = 16

    /// Removes routing entries and releases the subscriptions that are no longer needed.
    ///
    /// With `deferringUnsubscribe` (a finished request's response filters) a filter is released at
    /// once from the calling task when the connection can take it without waiting
    /// (``TransportConnection/unsubscribeWithoutWaiting(from:)``), as coaty-js releases it. Otherwise,
    /// and for a transport without that method, the send loop is not woken for them until
    /// ``deferredUnsubscribeBatch`` have piled up or something else wakes it: waking it costs more
    /// than the rest of a short request, and a response filter carries a correlation id no one else
    /// uses, so keeping it a little longer costs at most a few late responses, which find no observer
    /// and are dropped. Queued unsubscriptions go out together, in one request.
    func removeObservers(_ ids: [ObserverID], deferringUnsubscribe: Bool = false) {
        var directFilters: [TopicFilter] = []
        let (connection, ring) = self.state.withLock { state -> ((any TransportConnection)?, Bool) in
            var directConnection: (any TransportConnection)?
            var queued = false
            for id in ids {
                guard case .unsubscribe(let filter) = state.routing.remove(id), state.acceptsControl else { continue }
                if deferringUnsubscribe, let connection = state.directSubscribeConnection(for: filter),
                    state.routing.claimUnsubscribe(filter)
                {
                    // Marked, so the same filter is not subscribed again before it is released.
                    state.directReleases.insert(filter)
                    directFilters.append(filter)
                    directConnection = connection
                } else {
                    state.control.append(.unsubscribe(filter))
                    queued = true
                }
            }
            guard queued else { return (directConnection, false) }
            return (directConnection, !deferringUnsubscribe || state.control.count >= Self.deferredUnsubscribeBatch)
        }
        if let connection { self.releaseDirectly(directFilters, on: connection) }
        if ring { self.doorbell.ring() }
    }

    /// Unsubscribes `filters`, claimed by ``removeObservers(_:deferringUnsubscribe:)``, without waiting;
    /// queues them for the send loop if the connection cannot take them now.
    private func releaseDirectly(_ filters: [TopicFilter], on connection: any TransportConnection) {
        let released = (try? connection.unsubscribeWithoutWaiting(from: filters)) == true
        let ring = self.state.withLock { state -> Bool in
            for filter in filters { state.directReleases.remove(filter) }
            // A lost connection resets the subscriptions: then there is nothing left to release.
            guard !released, state.acceptsControl else { return false }
            for filter in filters {
                state.routing.returnUnsubscribeClaim(filter)
                state.control.append(.unsubscribe(filter))
            }
            return state.control.count >= Self.deferredUnsubscribeBatch
        }
        if ring { self.doorbell.ring() }
    }
}

extension InboundEvent {
    /// Decodes and validates the payload of a message received on a Coaty topic.
    static func decode(
        _ message: TransportMessage,
        topic: consuming CoatyTopic,
        family: ObjectFamily,
        responseRoute: ResponseRoute? = nil
    ) throws(CommunicationError) -> InboundEvent {
        let origin = EventOrigin(
            topic: message.topic,
            sourceID: topic.sourceID,
            correlationID: topic.correlationID,
            namespace: topic.namespace
        )
        func payload<P: WirePayload>(_ type: P.Type) throws(CommunicationError) -> P {
            try EventCoding.decode(P.self, from: message.payload, family: family)
        }
        func requireFilter() throws(CommunicationError) -> String {
            guard let filter = topic.filter, CoatyTopic.isValidEventFilter(filter) || filter.hasPrefix(":") else {
                throw CommunicationError.invalid("the \(topic.code.rawValue) event has no valid filter")
            }
            return filter
        }
        switch topic.code {
        case .advertise:
            _ = try requireFilter()
            return .advertise(try AdvertiseEvent(payload: payload(AdvertiseEvent.Payload.self), origin: origin))
        case .deadvertise:
            return .deadvertise(DeadvertiseEvent(payload: try payload(DeadvertiseEvent.Payload.self), origin: origin))
        case .channel:
            let channelID = try requireFilter()
            return .channel(
                ChannelEvent(channelID: channelID, payload: try payload(ChannelEvent.Payload.self), origin: origin)
            )
        case .discover:
            var discover = try DiscoverEvent(payload: payload(DiscoverEvent.Payload.self), origin: origin)
            discover.responseRoute = responseRoute
            return .discover(discover)
        case .resolve:
            return .resolve(ResolveEvent(payload: try payload(ResolveEvent.Payload.self), origin: origin))
        case .query:
            var query = try QueryEvent(payload: payload(QueryEvent.Payload.self), origin: origin)
            query.responseRoute = responseRoute
            return .query(query)
        case .retrieve:
            return .retrieve(RetrieveEvent(payload: try payload(RetrieveEvent.Payload.self), origin: origin))
        case .update:
            _ = try requireFilter()
            var update = try UpdateEvent(payload: payload(UpdateEvent.Payload.self), origin: origin)
            update.responseRoute = responseRoute
            return .update(update)
        case .complete:
            return .complete(CompleteEvent(payload: try payload(AdvertiseEvent.Payload.self), origin: origin))
        case .call:
            let operation = try requireFilter()
            var call = CallEvent(operation: operation, payload: try payload(CallEvent.Payload.self), origin: origin)
            call.responseRoute = responseRoute
            return .call(call)
        case .return:
            return .return(ReturnEvent(payload: try payload(ReturnEvent.Payload.self), origin: origin))
        case .associate:
            let context = try requireFilter()
            return .associate(
                try AssociateEvent(
                    ioContextName: context,
                    payload: payload(AssociateEvent.Payload.self),
                    origin: origin
                )
            )
        case .ioValue:
            throw CommunicationError.invalid("IO values are not decoded as Coaty events")
        }
    }

}
