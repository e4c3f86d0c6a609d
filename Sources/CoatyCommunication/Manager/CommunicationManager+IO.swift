import CoatyCore
public import CoatyModel
import CoatyTransport
import Synchronization

extension CommunicationManager {
    // MARK: Associate

    /// Publishes an Associate event on `ASC:<ioContextName>`; queues and suspends as
    /// ``publish(_:)-(AdvertiseEvent)``.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidEvent`` if the event
    ///   cannot be encoded; `CancellationError` if the task is cancelled while it waits.
    public func publish(_ event: AssociateEvent) async throws {
        try await self.publishWaiting([self.message(of: event)])
    }

    /// Publishes an Associate event without suspending; see
    /// ``publishWithoutWaiting(_:)-(AdvertiseEvent)``.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/outboxFull`` if the
    ///   outbox is full while online, and with code ``CommunicationError/Code/invalidEvent`` if the
    ///   event cannot be encoded.
    public func publishWithoutWaiting(_ event: AssociateEvent) throws {
        try self.publishRefusing([self.message(of: event)])
    }

    private func message(of event: AssociateEvent) throws(CommunicationError) -> TransportMessage {
        TransportMessage(
            topic: self.topic(.associate, filter: event.ioContextName).formatted,
            payload: try EventCoding.encode(event.payload)
        )
    }

    /// Observes Associate events of an IO context. Returns once the subscription is in place.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   context name is not a valid event filter.
    public func observeAssociate(ioContextName: String) async throws -> EventStream<AssociateEvent> {
        try EventValidation.checkFilterName(ioContextName, "IO context name")
        return await self.observe(filter: self.filter(.associate, filter: ioContextName)) { delivery in
            guard case .associate(let event)? = delivery.event else { return nil }
            return event
        }
    }

    /// Observes the Associate events of the IO context of each of `nodes`, once per context name, as
    /// the IO source and actor controllers do for the nodes holding their IO points.
    package func observeAssociates(ofContextsOf nodes: [IONode]) async throws -> [EventStream<AssociateEvent>] {
        var observations: [EventStream<AssociateEvent>] = []
        for contextName in Set(nodes.map(\.name)) {
            observations.append(try await self.observeAssociate(ioContextName: contextName))
        }
        return observations
    }

    /// Observes the IO state of an IO source or actor in an IO context, derived from the Associate
    /// events of that context: yields the current state first (no associations), then every change.
    /// An IO source's state carries the largest update rate of its associations; an IO actor's
    /// carries none (coaty-js never gives actors an update rate).
    ///
    /// Returns once the subscription is in place.
    ///
    /// - Parameters:
    ///   - ioContextName: The IO context.
    ///   - ioPointID: The IO source or IO actor.
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   context name is not a valid event filter.
    public func observeIOState(ioContextName: String, ioPointID: ObjectID) async throws -> EventStream<IOStateEvent> {
        try EventValidation.checkFilterName(ioContextName, "IO context name")
        let associations = Mutex<(pairs: [ObjectID: Int?], last: IOStateEvent)>(
            ([:], IOStateEvent(hasAssociations: false))
        )
        let (stream, continuation) = await self.observe(filters: [self.filter(.associate, filter: ioContextName)]) {
            delivery -> IOStateEvent? in
            guard case .associate(let event)? = delivery.event else { return nil }
            // The update rate is the source's: an actor's state never carries one, as in coaty-js.
            let counterpart: ObjectID
            let updateRate: Int?
            if event.ioSourceID == ioPointID {
                counterpart = event.ioActorID
                updateRate = event.updateRate
            } else if event.ioActorID == ioPointID {
                counterpart = event.ioSourceID
                updateRate = nil
            } else {
                return nil
            }
            return associations.withLock { state -> IOStateEvent? in
                if event.associatingRoute == nil {
                    state.pairs[counterpart] = nil
                } else {
                    state.pairs[counterpart] = .some(updateRate)
                }
                let rates = state.pairs.values.compactMap { $0 }
                let next = IOStateEvent(hasAssociations: !state.pairs.isEmpty, updateRate: rates.max())
                guard next != state.last else { return nil }
                state.last = next
                return next
            }
        }
        continuation.yield(IOStateEvent(hasAssociations: false))
        return stream
    }

    // MARK: IO values

    /// Publishes an IO value on its route, verbatim; queues and suspends as
    /// ``publish(_:)-(AdvertiseEvent)``.
    ///
    /// - Throws: `CancellationError` if the task is cancelled while it waits.
    public func publish(_ event: IOValueEvent) async throws {
        try await self.publishWaiting([TransportMessage(topic: event.route, payload: event.payload)])
    }

    /// Publishes an IO value without suspending; see ``publishWithoutWaiting(_:)-(AdvertiseEvent)``.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/outboxFull`` if the
    ///   outbox is full while online.
    public func publishWithoutWaiting(_ event: IOValueEvent) throws {
        try self.publishRefusing([TransportMessage(topic: event.route, payload: event.payload)])
    }

    /// Observes the IO values on a route (exact topic match, no wildcards). Returns once the
    /// subscription is in place.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidTopic`` if the
    ///   route is not a valid topic name.
    public func observeIOValue(route: String) async throws -> EventStream<IOValueEvent> {
        guard IOValueEvent.isValidRoute(route), let filter = try? TopicFilter(route) else {
            throw CommunicationError(.invalidTopic, "invalid IO route '\(route)'")
        }
        return await self.observe(filter: filter, kind: .ioValue) { delivery in
            IOValueEvent(
                received: delivery.topic,
                payload: delivery.payload,
                origin: EventOrigin(
                    topic: delivery.topic,
                    sourceID: delivery.coatyTopic?.sourceID,
                    namespace: delivery.coatyTopic?.namespace
                )
            )
        }
    }
}
