public import CoatyModel

extension CommunicationManager {
    // MARK: Discover - Resolve

    /// Observes Discover requests; answer each with ``DiscoverEvent/resolve(_:)``.
    ///
    /// Returns once the subscription is in place.
    public func observeDiscover() async -> EventStream<DiscoverEvent> {
        await self.observe(filter: self.filter(.discover)) { delivery in
            guard case .discover(let event)? = delivery.event else { return nil }
            return event
        }
    }

    /// Publishes a Discover and returns the stream of its Resolves.
    ///
    /// Subscribes the response topic first (`RSV/+/<correlationID>`), then publishes the request, so
    /// no response is missed. Resolves whose object does not match the Discover are dropped and
    /// reported as diagnostics. The stream stays open for responses from any number of agents until
    /// the consumer stops; use ``EventStream/first(timeout:clock:)`` when one answer is enough.
    ///
    /// - Parameters:
    ///   - event: The Discover.
    ///   - correlationID: The correlation id. Defaults to a fresh random UUID.
    public func discover(_ event: DiscoverEvent, correlationID: ObjectID = .random()) async throws
        -> EventStream<ResolveEvent>
    {
        let payload = try EventCoding.encode(event.payload)
        let stream = await self.observe(filter: self.filter(.resolve, correlationID: correlationID)) {
            [weak self] delivery -> ResolveEvent? in
            guard case .resolve(let resolve)? = delivery.event else { return nil }
            if let reason = event.rejectionReason(for: resolve) {
                self?.report(.init(kind: .rejectedResponse, topic: delivery.topic, reason: reason))
                return nil
            }
            return resolve
        }
        self.enqueue([TransportMessage(topic: self.topic(.discover, correlationID: correlationID).formatted, payload: payload)])
        return stream
    }
}
