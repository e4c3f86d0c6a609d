public import CoatyModel

/// Query: asks agents for objects of some types that match an `ObjectFilter`; answered by
/// ``RetrieveEvent``s.
public struct QueryEvent: Sendable {
    /// The object types queried (exactly one of ``objectTypes`` and ``coreTypes`` is set).
    public let objectTypes: [String]?
    /// The core types queried.
    public let coreTypes: [CoreType]?
    /// The filter the objects must match, with ordering and paging. Always sent (`{}` when empty),
    /// since coaty-js 2.4.1 cannot handle a Query without it.
    public let objectFilter: ObjectFilter
    /// How related objects are joined into the results.
    public let objectJoinConditions: ObjectJoinConditions?
    /// Where the event came from; `nil` for an event built locally.
    public internal(set) var origin: EventOrigin?
    var responseRoute: ResponseRoute?

    init(
        objectTypes: [String]?,
        coreTypes: [CoreType]?,
        objectFilter: ObjectFilter,
        objectJoinConditions: ObjectJoinConditions?
    ) throws(CommunicationError) {
        guard (objectTypes == nil) != (coreTypes == nil) else {
            throw CommunicationError(.invalidArgument, "a Query needs exactly one of objectTypes and coreTypes")
        }
        if let objectTypes, objectTypes.contains(where: \.isEmpty) {
            throw CommunicationError(.invalidArgument, "objectTypes must be non-empty strings")
        }
        self.objectTypes = objectTypes
        self.coreTypes = coreTypes
        self.objectFilter = objectFilter
        self.objectJoinConditions = objectJoinConditions
    }

    /// Queries objects of any of `objectTypes`.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if an
    ///   object type is empty.
    public static func byObjectTypes(
        _ objectTypes: [String],
        filter: ObjectFilter = ObjectFilter(),
        joinConditions: ObjectJoinConditions? = nil
    ) throws -> QueryEvent {
        try QueryEvent(
            objectTypes: objectTypes,
            coreTypes: nil,
            objectFilter: filter,
            objectJoinConditions: joinConditions
        )
    }

    /// Queries objects of any of `coreTypes`.
    public static func byCoreTypes(
        _ coreTypes: [CoreType],
        filter: ObjectFilter = ObjectFilter(),
        joinConditions: ObjectJoinConditions? = nil
    ) throws -> QueryEvent {
        try QueryEvent(
            objectTypes: nil,
            coreTypes: coreTypes,
            objectFilter: filter,
            objectJoinConditions: joinConditions
        )
    }

    /// Whether `object` has one of the queried types (the requester-side Retrieve check).
    public func isTypeCompatible(_ object: CoatyObject) -> Bool {
        if let coreTypes { return coreTypes.contains(object.coreType) }
        return self.objectTypes?.contains(object.objectType) ?? false
    }

    /// Answers this received Query. Enqueues the Retrieve and returns without suspending.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidResponse`` if a
    ///   retrieved object is not of a queried type, ``CommunicationError/Code/notRunning`` if this
    ///   Query was not received by a manager.
    public func retrieve(_ retrieve: RetrieveEvent) throws {
        if let reason = self.rejectionReason(for: retrieve) { throw CommunicationError(.invalidResponse, reason) }
        guard let route = self.responseRoute else {
            throw CommunicationError(.notRunning, "this Query was not received by a communication manager")
        }
        try route.send(.retrieve, try EventCoding.encode(retrieve.payload))
    }

    func rejectionReason(for retrieve: RetrieveEvent) -> String? {
        guard let wrong = retrieve.objects.first(where: { !self.isTypeCompatible($0) }) else { return nil }
        return "retrieved object \(wrong.objectID) of type \(wrong.objectType) is not of a queried type"
    }

    struct Payload: WirePayload {
        var objectTypes: [String]?
        var coreTypes: [CoreType]?
        var objectFilter: ObjectFilter
        var objectJoinConditions: ObjectJoinConditions?

        enum CodingKeys: String, CodingKey { case objectTypes, coreTypes, objectFilter, objectJoinConditions }

        init(
            objectTypes: [String]?,
            coreTypes: [CoreType]?,
            objectFilter: ObjectFilter,
            objectJoinConditions: ObjectJoinConditions?
        ) {
            self.objectTypes = objectTypes
            self.coreTypes = coreTypes
            self.objectFilter = objectFilter
            self.objectJoinConditions = objectJoinConditions
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.objectTypes = try container.decodeNonEmptyStrings(forKey: .objectTypes)
            self.coreTypes =
                container.contains(.coreTypes) ? try container.decode([CoreType].self, forKey: .coreTypes) : nil
            self.objectFilter = try container.decode(ObjectFilter.self, forKey: .objectFilter)
            self.objectJoinConditions =
                container.contains(.objectJoinConditions)
                ? try container.decode(ObjectJoinConditions.self, forKey: .objectJoinConditions) : nil
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(self.objectTypes, forKey: .objectTypes)
            try container.encodeIfPresent(self.coreTypes, forKey: .coreTypes)
            try container.encode(self.objectFilter, forKey: .objectFilter)
            try container.encodeIfPresent(self.objectJoinConditions, forKey: .objectJoinConditions)
        }
    }

    var payload: Payload {
        Payload(
            objectTypes: self.objectTypes,
            coreTypes: self.coreTypes,
            objectFilter: self.objectFilter,
            objectJoinConditions: self.objectJoinConditions
        )
    }

    init(payload: Payload, origin: EventOrigin) throws(CommunicationError) {
        do {
            try self.init(
                objectTypes: payload.objectTypes,
                coreTypes: payload.coreTypes,
                objectFilter: payload.objectFilter,
                objectJoinConditions: payload.objectJoinConditions
            )
        } catch {
            throw .invalid(error.message)
        }
        self.origin = origin
    }
}

/// Retrieve: an agent's answer to a ``QueryEvent``.
public struct RetrieveEvent: Sendable {
    /// The retrieved objects (possibly none).
    public let objects: [CoatyObject]
    /// Application data.
    public let privateData: [String: AnyCodable]?
    /// Where the event came from; `nil` for an event built locally.
    public internal(set) var origin: EventOrigin?

    /// Creates a Retrieve event.
    public init(objects: [CoatyObject], privateData: [String: AnyCodable]? = nil) {
        self.objects = objects
        self.privateData = privateData
    }

    struct Payload: WirePayload {
        var objects: [CoatyObject]
        var privateData: [String: AnyCodable]?

        enum CodingKeys: String, CodingKey { case objects, privateData }

        init(objects: [CoatyObject], privateData: [String: AnyCodable]?) {
            self.objects = objects
            self.privateData = privateData
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.objects = try container.decodeObjects(forKey: .objects)
            self.privateData = try container.decodePrivateData(forKey: .privateData)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try self.objects.encodeObjects(into: &container, forKey: .objects)
            try container.encodeIfPresent(self.privateData, forKey: .privateData)
        }
    }

    var payload: Payload { Payload(objects: self.objects, privateData: self.privateData) }

    init(payload: Payload, origin: EventOrigin) {
        self.objects = payload.objects
        self.privateData = payload.privateData
        self.origin = origin
    }
}
