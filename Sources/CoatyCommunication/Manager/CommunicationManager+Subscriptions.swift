package import CoatyCore
import CoatyTransport
import Synchronization

extension CommunicationManager {
    /// Registers an observation of a route; see ``observe(filter:kind:_:)``.
    package func observe<Event: Sendable>(_ route: EventRoute<Event>) async -> EventStream<Event> {
        await self.observe(filter: route.filter, route.select)
    }

    /// Registers an observation and returns once its subscription is in place (when online) or
    /// registered for the next connect (when offline).
    package func observe<Event: Sendable>(
        filter: TopicFilter,
        kind: RouteKind = .coaty,
        _ transform: @escaping @Sendable (Delivery) -> Event?
    ) async -> EventStream<Event> {
        await self.observe(filters: [filter], kind: kind, transform).stream
    }

    package func observe<Event: Sendable>(
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
    /// task, with one lock (`ManagerStateMachine.registerRequest(_:receiver:)`): the routes are added,
    /// their subscriptions claimed and handed to the connection without waiting for its confirmation
    /// (it goes out ahead of the request, so it is in place before any response can exist; see
    /// ``TransportConnection/subscribeWithoutWaiting(to:)``), and the connection to publish on taken;
    /// the subscription and the request are handed over inside one
    /// ``TransportConnection/coalescingWrites(_:)``, so a broker reads them in one go.
    /// Otherwise each step falls back to what ``subscribe(_:forResponses:)`` and
    /// ``enqueue(_:directly:)`` do. Releasing the response filters may wait for a batch (see
    /// `ManagerStateMachine.removeObservers(_:deferringUnsubscribe:)`).
    func request<Event: Sendable>(
        _ messages: [TransportMessage],
        responseFilters filters: [TopicFilter],
        _ transform: @escaping @Sendable (Delivery) -> Event?
    ) async -> EventStream<Event> {
        let (stream, continuation, receiver) = self.makeObservation(transform)
        let registration = self.state.withLock { $0.machine.registerRequest(filters, receiver: receiver) }
        let ids = registration.ids
        continuation.onTermination { [weak self] in self?.removeObservers(ids, deferringUnsubscribe: true) }
        var toSubscribe = registration.queued
        // The connection taken under the lock serves only if nothing suspended since.
        var publishConnection = registration.publishConnection
        // Finished requests' held releases (see `removeObservers`): after the request, in its write,
        // or else before anything suspends, since a queued subscription of a reused correlation id
        // waits for the release of its filter.
        var releases = registration.releases
        func releaseHeld() {
            guard let releaseConnection = registration.releaseConnection, !releases.isEmpty else { return }
            self.releaseDirectly(releases, on: releaseConnection)
            releases = []
        }
        if let connection = registration.subscribeConnection {
            // The subscription and the request are handed over together, so they leave in one write.
            let handedOver = connection.coalescingWrites { () -> Bool in
                guard (try? connection.subscribeWithoutWaiting(to: registration.claimed)) == true else { return false }
                if toSubscribe.isEmpty, let publishConnection {
                    self.enqueue(messages, on: publishConnection, request: ids.first)
                    releaseHeld()
                }
                return true
            }
            releaseHeld()
            if handedOver {
                if toSubscribe.isEmpty, publishConnection != nil { return stream }
            } else {
                switch await self.subscribeClaimed(registration.claimed, on: connection, withoutWaiting: false) {
                case .handedOver, .confirmed:
                    publishConnection = nil
                case .failed:
                    toSubscribe = registration.claimed + toSubscribe
                }
            }
        }
        releaseHeld()
        if !toSubscribe.isEmpty {
            await self.subscribe(toSubscribe, forResponses: true)
            publishConnection = nil
        }
        if let publishConnection {
            self.enqueue(messages, on: publishConnection, request: ids.first)
        } else {
            self.enqueue(messages, directly: true, request: ids.first)
        }
        return stream
    }

    /// How ``subscribeClaimed(_:on:withoutWaiting:)`` went.
    private enum ClaimedSubscription {
        /// Handed to the connection without suspending.
        case handedOver
        /// Subscribed after waiting for the connection's confirmation.
        case confirmed
        /// Failed: the claims are released, and the filters have to be queued for the send loop.
        case failed
    }

    /// Subscribes filters claimed with `ManagerStateMachine.claimDirectSubscription(of:forResponses:)`
    /// on `connection` from the calling task; with `withoutWaiting`, without waiting for the
    /// connection's confirmation when it can take them so.
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
            self.state.withLock { $0.machine.releaseSubscribeClaims(filters) }
            return .failed
        }
    }

    /// Waits until no subscription of `filters` that another task or the send loop claimed is still
    /// waiting for its confirmation, so that an observation returns with its subscription in place even
    /// when it found the filter already claimed (unless the connection ends first: the next one then
    /// subscribes it, as for an observation made offline). Cancellation ends the wait, as in
    /// ``subscribe(_:forResponses:)``.
    func waitForPendingSubscriptions(of filters: [TopicFilter]) async {
        for filter in filters {
            let waiter = self.waiters.makeToken()
            guard self.state.withLock({ $0.machine.waitForPendingSubscription(of: filter, waiter: waiter) }) else {
                self.waiters.discard(waiter)
                continue
            }
            do { try await self.waiters.wait(waiter) } catch { return }
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
        let added = self.state.withLock { $0.machine.routing.add(filters, kind: kind, receiver: receiver) }
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
            let waiter = self.waiters.makeToken()
            switch self.state.withLock({ $0.machine.queueSubscription(filter, waiter: waiter) }) {
            case .notConnected:
                self.waiters.discard(waiter)
            case .queued(let wake):
                if let wake { self.resume(CollectionOfOne(wake)) }
                // Cancellation ends the wait, so an observation never outlasts its task's cancellation
                // while a connection keeps its subscribe pending; the queued subscription is still made.
                try? await self.waiters.wait(waiter)
            }
        }
    }

    /// Subscribes `filter` from the calling task when online and idle. Returns `false` when the
    /// subscription has to be queued for ``run()``: offline, busy, or the direct attempt failed (the
    /// send loop then retries it, or reconnects). A request's response filter (`forResponses`) is
    /// handed over without waiting for the confirmation, and its claim is not registered for other
    /// observers to wait on.
    private func subscribeDirectly(_ filter: TopicFilter, forResponses: Bool) async -> Bool {
        switch self.state.withLock({ $0.machine.claimDirectSubscription(of: filter, forResponses: forResponses) }) {
        case .claimed(let connection, let claim):
            let result = await self.subscribeClaimed([filter], on: connection, withoutWaiting: forResponses)
            if let claim { self.resume(self.state.withLock { $0.machine.subscriptionEnded(filter, claim: claim) }) }
            return result != .failed
        case .alreadyClaimed:
            return true
        case .unavailable:
            return false
        }
    }

    /// Removes routing entries and releases the subscriptions that are no longer needed; with
    /// `deferringUnsubscribe` (a finished request's response filters) with the next request's write
    /// or within `Configuration.releaseHoldTime`, when the connection can take them without
    /// waiting (``TransportConnection/unsubscribeWithoutWaiting(from:)``), or else in a batch
    /// (`ManagerStateMachine.deferredUnsubscribeBatch`).
    func removeObservers(_ ids: [ObserverID], deferringUnsubscribe: Bool = false) {
        let removal = self.state.withLock {
            $0.machine.removeObservers(ids, deferringUnsubscribe: deferringUnsubscribe)
        }
        if let release = removal.directRelease { self.releaseDirectly(release.filters, on: release.connection) }
        if removal.schedulesReleaseFlush {
            _ = DeadlineTimer.shared.schedule(after: self.configuration.releaseHoldTime) { [weak self] in
                self?.flushHeldReleases()
            }
        }
        if let wake = removal.wake { self.resume(CollectionOfOne(wake)) }
    }

    /// Releases the finished requests' response subscriptions that no request's write took along.
    private func flushHeldReleases() {
        guard let held = self.state.withLock({ $0.machine.takeHeldReleases() }) else { return }
        self.releaseDirectly(held.filters, on: held.connection)
    }

    /// Unsubscribes `filters`, claimed by ``removeObservers(_:deferringUnsubscribe:)``, without waiting;
    /// the state machine queues them for the send loop if the connection cannot take them now.
    private func releaseDirectly(_ filters: [TopicFilter], on connection: any TransportConnection) {
        let released = (try? connection.unsubscribeWithoutWaiting(from: filters)) == true
        self.resume(self.state.withLock { $0.machine.directReleaseEnded(filters, released: released) })
    }
}
