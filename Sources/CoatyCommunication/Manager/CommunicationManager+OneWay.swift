import CoatyCore
public import CoatyModel
import CoatyTransport

extension CommunicationManager {
    // MARK: Advertise

    /// Publishes an Advertise event.
    ///
    /// Published on `ADV:<CoreType>`, and also on `ADV::<objectType>` when the object type is not the
    /// canonical `coaty.<CoreType>`; either way it takes one place in the outbox. Queues the
    /// publication for ``run()`` and returns; while online and the outbox is full
    /// (``Configuration/outboxCapacity``), suspends until the send loop has taken it, so nothing is
    /// dropped and a task's publications keep their order. While offline the publication waits in the
    /// outbox, which drops (and reports) its oldest publication when full.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidEvent`` if the event
    ///   cannot be encoded; `CancellationError` if the task is cancelled while it waits (then nothing
    ///   is published).
    public func publish(_ event: AdvertiseEvent) async throws {
        try await self.publishWaiting(try self.messages(of: event))
    }

    /// Publishes an Advertise event without suspending, for callers that cannot wait: as
    /// ``publish(_:)-(AdvertiseEvent)``, but a full outbox while online refuses it.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/outboxFull`` if the
    ///   outbox is full while online, and with code ``CommunicationError/Code/invalidEvent`` if the
    ///   event cannot be encoded.
    public func publishWithoutWaiting(_ event: AdvertiseEvent) throws {
        try self.publishRefusing(try self.messages(of: event))
    }

    private func messages(of event: AdvertiseEvent) throws(CommunicationError) -> [TransportMessage] {
        let payload = try EventCoding.encode(event.payload)
        return self.typeFilters(for: event.object).map { filter in
            TransportMessage(topic: self.topic(.advertise, filter: filter).formatted, payload: payload)
        }
    }

    /// Observes Advertise events of objects of a core type (subscribes `ADV:<CoreType>`).
    ///
    /// Returns once the subscription is in place (online) or registered for the next connect (offline).
    public func observeAdvertise(coreType: CoreType) async -> EventStream<AdvertiseEvent> {
        await self.observe(self.advertiseRoute(coreType: coreType))
    }

    /// Advertises of a core type, as ``observeAdvertise(coreType:)`` and the lifecycle controller
    /// receive them.
    package func advertiseRoute(coreType: CoreType) -> EventRoute<AdvertiseEvent> {
        EventRoute(filter: self.filter(.advertise, filter: coreType.rawValue)) { delivery in
            guard case .advertise(let event)? = delivery.event else { return nil }
            return event
        }
    }

    /// Observes Advertise events of objects of an object type.
    ///
    /// Subscribes `ADV::<objectType>`, or for a canonical core object type such as `coaty.Task`
    /// `ADV:Task` with a local check of the object type. Returns once the subscription is in place.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   object type is not a valid event filter.
    public func observeAdvertise(objectType: String) async throws -> EventStream<AdvertiseEvent> {
        await self.observe(try self.advertiseRoute(objectType: objectType))
    }

    /// Advertises of an object type, as ``observeAdvertise(objectType:)`` and the lifecycle
    /// controller receive them.
    package func advertiseRoute(objectType: String) throws(CommunicationError) -> EventRoute<AdvertiseEvent> {
        try EventValidation.checkFilterName(objectType, "objectType")
        return EventRoute(filter: self.filter(.advertise, filter: Self.typeFilter(objectType))) { delivery in
            guard case .advertise(let event)? = delivery.event, event.object.objectType == objectType else {
                return nil
            }
            return event
        }
    }

    // MARK: Deadvertise

    /// Publishes a Deadvertise event on `DAD`; queues and suspends as ``publish(_:)-(AdvertiseEvent)``.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidEvent`` if the event
    ///   cannot be encoded; `CancellationError` if the task is cancelled while it waits.
    public func publish(_ event: DeadvertiseEvent) async throws {
        try await self.publishWaiting([self.message(of: event)])
    }

    /// Publishes a Deadvertise event without suspending; see
    /// ``publishWithoutWaiting(_:)-(AdvertiseEvent)``.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/outboxFull`` if the
    ///   outbox is full while online, and with code ``CommunicationError/Code/invalidEvent`` if the
    ///   event cannot be encoded.
    public func publishWithoutWaiting(_ event: DeadvertiseEvent) throws {
        try self.publishRefusing([self.message(of: event)])
    }

    private func message(of event: DeadvertiseEvent) throws(CommunicationError) -> TransportMessage {
        TransportMessage(topic: self.topic(.deadvertise).formatted, payload: try EventCoding.encode(event.payload))
    }

    /// Observes Deadvertise events, including the unjoin events and last wills of agents.
    ///
    /// Returns once the subscription is in place.
    public func observeDeadvertise() async -> EventStream<DeadvertiseEvent> {
        await self.observe(self.deadvertiseRoute())
    }

    /// Deadvertises, as ``observeDeadvertise()`` and the lifecycle controller receive them.
    package func deadvertiseRoute() -> EventRoute<DeadvertiseEvent> {
        EventRoute(filter: self.filter(.deadvertise)) { delivery in
            guard case .deadvertise(let event)? = delivery.event else { return nil }
            return event
        }
    }

    // MARK: Channel

    /// Publishes a Channel event on `CHN:<channelID>`; queues and suspends as
    /// ``publish(_:)-(AdvertiseEvent)``.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidEvent`` if the event
    ///   cannot be encoded; `CancellationError` if the task is cancelled while it waits.
    public func publish(_ event: ChannelEvent) async throws {
        try await self.publishWaiting([self.message(of: event)])
    }

    /// Publishes a Channel event without suspending; see
    /// ``publishWithoutWaiting(_:)-(AdvertiseEvent)``.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/outboxFull`` if the
    ///   outbox is full while online, and with code ``CommunicationError/Code/invalidEvent`` if the
    ///   event cannot be encoded.
    public func publishWithoutWaiting(_ event: ChannelEvent) throws {
        try self.publishRefusing([self.message(of: event)])
    }

    private func message(of event: ChannelEvent) throws(CommunicationError) -> TransportMessage {
        TransportMessage(
            topic: self.topic(.channel, filter: event.channelID).formatted,
            payload: try EventCoding.encode(event.payload)
        )
    }

    /// Observes Channel events of one channel. Returns once the subscription is in place.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   channel id is not a valid event filter.
    public func observeChannel(_ channelID: String) async throws -> EventStream<ChannelEvent> {
        await self.observe(try self.channelRoute(channelID))
    }

    /// Channel events of one channel, as ``observeChannel(_:)`` and the SensorThings observers receive
    /// them.
    package func channelRoute(_ channelID: String) throws(CommunicationError) -> EventRoute<ChannelEvent> {
        try EventValidation.checkFilterName(channelID, "channel id")
        return EventRoute(filter: self.filter(.channel, filter: channelID)) { delivery in
            guard case .channel(let event)? = delivery.event else { return nil }
            return event
        }
    }

    // MARK: Raw

    /// Publishes a Raw event on its topic, verbatim; queues and suspends as
    /// ``publish(_:)-(AdvertiseEvent)``.
    ///
    /// - Throws: `CancellationError` if the task is cancelled while it waits.
    public func publish(_ event: RawEvent) async throws {
        try await self.publishWaiting([
            TransportMessage(topic: event.topic, payload: event.payload, retain: event.retain)
        ])
    }

    /// Publishes a Raw event without suspending; see ``publishWithoutWaiting(_:)-(AdvertiseEvent)``.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/outboxFull`` if the
    ///   outbox is full while online.
    public func publishWithoutWaiting(_ event: RawEvent) throws {
        try self.publishRefusing([TransportMessage(topic: event.topic, payload: event.payload, retain: event.retain)])
    }

    /// Observes Raw events on topics matching an MQTT topic filter (wildcards allowed).
    ///
    /// Coaty topics are never delivered to Raw observations, except IO values. Returns once the
    /// subscription is in place.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidTopic`` if the filter
    ///   is invalid or starts with `coaty/`.
    public func observeRaw(_ topicFilter: String) async throws -> EventStream<RawEvent> {
        let filter: TopicFilter
        do {
            filter = try TopicFilter(topicFilter)
        } catch {
            throw CommunicationError(.invalidTopic, error.description, underlying: error)
        }
        guard !CoatyTopic.isCoatyTopic(topicFilter) else {
            throw CommunicationError(.invalidTopic, "a Raw topic filter must not start with 'coaty/': '\(topicFilter)'")
        }
        return await self.observe(filter: filter, kind: .raw) { delivery in
            RawEvent(received: delivery.topic, payload: delivery.payload)
        }
    }

    // MARK: Helpers

    /// A topic published by this agent.
    func topic(_ code: EventCode, filter: String? = nil, correlationID: ObjectID? = nil) -> CoatyTopic {
        CoatyTopic(
            namespace: self.namespace,
            code: code,
            filter: filter,
            sourceID: self.identity.objectID,
            correlationID: correlationID
        )
    }

    /// A subscription filter in this agent's namespace (or every namespace with cross-namespacing).
    func filter(_ code: EventCode, filter: String? = nil, correlationID: ObjectID? = nil) -> TopicFilter {
        CoatyTopic.subscriptionFilter(
            code,
            filter: filter,
            namespace: self.configuration.subscriptionNamespace,
            correlationID: correlationID
        )
    }

    /// The event filters an Advertise or Update of `object` is published under.
    func typeFilters(for object: CoatyObject) -> [String] {
        var filters = [object.coreType.rawValue]
        if object.objectType != object.coreType.objectType {
            filters.append(CoatyTopic.objectTypeFilter(object.objectType))
        }
        return filters
    }

    /// The filter used to observe an object type: the core type for canonical core object types.
    static func typeFilter(_ objectType: String) -> String {
        if let coreType = CoreType(canonicalObjectType: objectType) { return coreType.rawValue }
        return CoatyTopic.objectTypeFilter(objectType)
    }
}
