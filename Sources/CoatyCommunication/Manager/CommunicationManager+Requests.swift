public import CoatyModel
import CoatyTransport

extension CommunicationManager {
    // MARK: Discover - Resolve

    /// Observes Discover requests; answer each with ``DiscoverEvent/resolve(_:)``.
    ///
    /// Returns once the subscription is in place.
    public func observeDiscover() async -> EventStream<DiscoverEvent> {
        await self.observe(self.discoverRoute())
    }

    /// Discover requests, as ``observeDiscover()`` and ``handleDiscover(_:)`` receive them.
    func discoverRoute() -> EventRoute<DiscoverEvent> {
        EventRoute(filter: self.filter(.discover)) { delivery in
            guard case .discover(let event)? = delivery.event else { return nil }
            return event
        }
    }

    /// Publishes a Discover and returns the stream of its Resolves.
    ///
    /// Subscribes the response topic first (`RSV/+/<correlationID>`), then publishes the request, so
    /// no response is missed. Resolves whose object does not match the Discover are dropped and
    /// reported as diagnostics. The stream stays open for responses from any number of agents until
    /// the consumer stops; use ``EventStream/first(timeout:clock:isolation:)`` when one answer is enough.
    ///
    /// - Parameters:
    ///   - event: The Discover.
    ///   - correlationID: The correlation id. Defaults to a fresh random UUID.
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` for a
    ///   correlation id that cannot be a topic level (empty, or with `/`, `+`, `#` or U+0000), and
    ///   with code ``CommunicationError/Code/invalidEvent`` for an event that cannot be encoded.
    public func discover(_ event: DiscoverEvent, correlationID: ObjectID = .random()) async throws
        -> EventStream<ResolveEvent>
    {
        try await self.discover(event, correlationID: correlationID) { $0 }
    }

    /// ``discover(_:correlationID:)`` with `map` applied to each accepted Resolve where it is decoded,
    /// in arrival order; a Resolve it maps to `nil` is not put in the stream.
    package func discover<Event: Sendable>(
        _ event: DiscoverEvent,
        correlationID: ObjectID = .random(),
        _ map: @escaping @Sendable (ResolveEvent) -> Event?
    ) async throws -> EventStream<Event> {
        try EventValidation.checkFilterName(correlationID.rawValue, "correlationID")
        let payload = try EventCoding.encode(event.payload)
        return await self.request(.discover, payload: payload, correlationID: correlationID, responses: .resolve) {
            [weak self] delivery -> Event? in
            guard case .resolve(let resolve)? = delivery.event,
                self?.accepts(delivery, rejectionReason: event.rejectionReason(for: resolve)) != false
            else { return nil }
            return map(resolve)
        }
    }
}

extension CommunicationManager {
    // MARK: Query - Retrieve

    /// Observes Query requests; answer each with ``QueryEvent/retrieve(_:)``, for example with the
    /// objects that `query.objectFilter.apply(to:)` selects. Returns once the subscription is in place.
    public func observeQuery() async -> EventStream<QueryEvent> {
        await self.observe(self.queryRoute())
    }

    /// Query requests, as ``observeQuery()`` and ``handleQuery(_:)`` receive them.
    func queryRoute() -> EventRoute<QueryEvent> {
        EventRoute(filter: self.filter(.query)) { delivery in
            guard case .query(let event)? = delivery.event else { return nil }
            return event
        }
    }

    /// Publishes a Query and returns the stream of its Retrieves.
    ///
    /// Subscribes `RTV/+/<correlationID>` first, then publishes. Retrieves containing an object that is
    /// not of a queried type are dropped and reported as diagnostics.
    ///
    /// - Parameters:
    ///   - event: The Query.
    ///   - correlationID: The correlation id. Defaults to a fresh random UUID.
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` for a
    ///   correlation id that cannot be a topic level (empty, or with `/`, `+`, `#` or U+0000), and
    ///   with code ``CommunicationError/Code/invalidEvent`` for an event that cannot be encoded.
    public func query(_ event: QueryEvent, correlationID: ObjectID = .random()) async throws
        -> EventStream<RetrieveEvent>
    {
        try await self.query(event, correlationID: correlationID) { $0 }
    }

    /// ``query(_:correlationID:)`` with `map` applied to each accepted Retrieve where it is decoded;
    /// a Retrieve it maps to `nil` is not put in the stream.
    package func query<Event: Sendable>(
        _ event: QueryEvent,
        correlationID: ObjectID = .random(),
        _ map: @escaping @Sendable (RetrieveEvent) -> Event?
    ) async throws -> EventStream<Event> {
        try EventValidation.checkFilterName(correlationID.rawValue, "correlationID")
        let payload = try EventCoding.encode(event.payload)
        return await self.request(.query, payload: payload, correlationID: correlationID, responses: .retrieve) {
            [weak self] delivery -> Event? in
            guard case .retrieve(let retrieve)? = delivery.event,
                self?.accepts(delivery, rejectionReason: event.rejectionReason(for: retrieve)) != false
            else { return nil }
            return map(retrieve)
        }
    }

    // MARK: Update - Complete

    /// Observes Update requests for objects of a core type (subscribes `UPD:<CoreType>`); answer each
    /// with ``UpdateEvent/complete(_:)``. Returns once the subscription is in place.
    public func observeUpdate(coreType: CoreType) async -> EventStream<UpdateEvent> {
        await self.observe(self.updateRoute(coreType: coreType))
    }

    /// Updates of a core type, as ``observeUpdate(coreType:)`` and the IO router receive them.
    package func updateRoute(coreType: CoreType) -> EventRoute<UpdateEvent> {
        EventRoute(filter: self.filter(.update, filter: coreType.rawValue)) { delivery in
            guard case .update(let event)? = delivery.event else { return nil }
            return event
        }
    }

    /// Observes Update requests for objects of an object type (subscribes `UPD::<objectType>`, or
    /// `UPD:<CoreType>` with a local check for a canonical core object type). Returns once the
    /// subscription is in place.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   object type is not a valid event filter.
    public func observeUpdate(objectType: String) async throws -> EventStream<UpdateEvent> {
        try EventValidation.checkFilterName(objectType, "objectType")
        return await self.observe(filter: self.filter(.update, filter: Self.typeFilter(objectType))) { delivery in
            guard case .update(let event)? = delivery.event, event.object.objectType == objectType else { return nil }
            return event
        }
    }

    /// Publishes an Update and returns the stream of its Completes.
    ///
    /// An object of a non-canonical object type is published twice, first on `UPD::<objectType>` with
    /// `objectTypeCorrelationID`, then on `UPD:<CoreType>` with `correlationID`; the stream merges the
    /// Completes of both. Response topics are subscribed before the request is published. Completes
    /// for another object id are dropped and reported as diagnostics.
    ///
    /// - Parameters:
    ///   - event: The Update.
    ///   - correlationID: The correlation id of the core-type request. Defaults to a random UUID.
    ///   - objectTypeCorrelationID: The correlation id of the object-type request. Defaults to a random UUID.
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` for a
    ///   correlation id that cannot be a topic level (empty, or with `/`, `+`, `#` or U+0000), and
    ///   with code ``CommunicationError/Code/invalidEvent`` for an event that cannot be encoded.
    public func update(
        _ event: UpdateEvent,
        correlationID: ObjectID = .random(),
        objectTypeCorrelationID: ObjectID = .random()
    ) async throws -> EventStream<CompleteEvent> {
        try EventValidation.checkFilterName(correlationID.rawValue, "correlationID")
        try EventValidation.checkFilterName(objectTypeCorrelationID.rawValue, "objectTypeCorrelationID")
        let payload = try EventCoding.encode(event.payload)
        var requests: [(filter: String, correlationID: ObjectID)] = []
        if event.object.objectType != event.object.coreType.objectType {
            requests.append((CoatyTopic.objectTypeFilter(event.object.objectType), objectTypeCorrelationID))
        }
        requests.append((event.object.coreType.rawValue, correlationID))
        return await self.request(
            requests.map { request in
                TransportMessage(
                    topic: self.topic(.update, filter: request.filter, correlationID: request.correlationID).formatted,
                    payload: payload
                )
            },
            responseFilters: requests.map { self.filter(.complete, correlationID: $0.correlationID) }
        ) { [weak self] delivery -> CompleteEvent? in
            guard case .complete(let complete)? = delivery.event,
                self?.accepts(delivery, rejectionReason: event.rejectionReason(for: complete)) != false
            else { return nil }
            return complete
        }
    }

    // MARK: Call - Return

    /// Observes Call requests for an operation (subscribes `CLL:<operation>`); answer each with
    /// ``CallEvent/returnResult(_:executionInfo:)`` or ``CallEvent/returnError(_:executionInfo:)``.
    /// Returns once the subscription is in place.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   operation is not a valid event filter.
    ///
    /// - Parameters:
    ///   - operation: The operation name.
    ///   - context: The callee's context object. When given, only Calls whose context filter matches
    ///     it are delivered; Calls without a filter are not (protocol §5). Unmatched Calls get no Return.
    public func observeCall(_ operation: String, context: CoatyObject? = nil) async throws -> EventStream<CallEvent> {
        await self.observe(try self.callRoute(operation, context: context))
    }

    /// Calls for `operation` that match `context`, as ``observeCall(_:context:)`` and
    /// ``handleCalls(_:context:_:)`` receive them.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   operation is not a valid event filter.
    func callRoute(_ operation: String, context: CoatyObject?) throws(CommunicationError) -> EventRoute<CallEvent> {
        try EventValidation.checkFilterName(operation, "operation")
        return EventRoute(filter: self.filter(.call, filter: operation)) { delivery in
            guard case .call(let event)? = delivery.event, event.matches(context: context) else { return nil }
            return event
        }
    }

    /// Publishes a Call and returns the stream of its Returns.
    ///
    /// Subscribes `RTN/+/<correlationID>` first, then publishes on `CLL:<operation>`. Every Return
    /// from any number of callees is delivered until the consumer stops.
    ///
    /// - Parameters:
    ///   - event: The Call.
    ///   - correlationID: The correlation id. Defaults to a fresh random UUID.
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` for a
    ///   correlation id that cannot be a topic level (empty, or with `/`, `+`, `#` or U+0000), and
    ///   with code ``CommunicationError/Code/invalidEvent`` for an event that cannot be encoded.
    public func call(_ event: CallEvent, correlationID: ObjectID = .random()) async throws -> EventStream<ReturnEvent> {
        try EventValidation.checkFilterName(correlationID.rawValue, "correlationID")
        let payload = try EventCoding.encode(event.payload)
        return await self.request(
            .call,
            filter: event.operation,
            payload: payload,
            correlationID: correlationID,
            responses: .return
        ) { delivery -> ReturnEvent? in
            guard case .return(let returnEvent)? = delivery.event else { return nil }
            return returnEvent
        }
    }
}

extension CommunicationManager {
    /// A request with one correlation id: publishes `payload` on the `code` topic (with `filter`) and
    /// returns the stream of the responses on the `responseCode` topic of the same correlation id (see
    /// ``request(_:responseFilters:_:)``).
    func request<Event: Sendable>(
        _ code: EventCode,
        filter: String? = nil,
        payload: [UInt8],
        correlationID: ObjectID,
        responses responseCode: EventCode,
        _ transform: @escaping @Sendable (Delivery) -> Event?
    ) async -> EventStream<Event> {
        await self.request(
            [
                TransportMessage(
                    topic: self.topic(code, filter: filter, correlationID: correlationID).formatted,
                    payload: payload
                )
            ],
            responseFilters: [self.filter(responseCode, correlationID: correlationID)],
            transform
        )
    }

    /// Whether a response passes its request's check (`rejectionReason(for:)` gave no reason); one that
    /// fails it is reported as a diagnostic.
    func accepts(_ delivery: Delivery, rejectionReason reason: String?) -> Bool {
        guard let reason else { return true }
        self.report(.init(kind: .rejectedResponse, topic: delivery.topic, reason: reason))
        return false
    }
}
