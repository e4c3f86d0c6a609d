public import CoatyModel

/// Discover: asks agents to resolve an object by id, by external id, or objects by type.
///
/// Build one with a factory (``byObjectID(_:)``, ``byExternalID(_:objectTypes:coreTypes:)``,
/// ``byExternalAndObjectID(externalID:objectID:)``, ``byObjectTypes(_:)``, ``byCoreTypes(_:)``);
/// send it with ``CommunicationManager/discover(_:correlationID:)``. A received Discover answers with
/// ``resolve(_:)``.
public struct DiscoverEvent: Sendable {
    /// The external id to discover.
    public let externalID: String?
    /// The object id to discover.
    public let objectID: ObjectID?
    /// The object types to discover.
    public let objectTypes: [String]?
    /// The core types to discover.
    public let coreTypes: [CoreType]?
    /// Where the event came from; `nil` for an event built locally.
    public internal(set) var origin: EventOrigin?
    var responseRoute: ResponseRoute?

    init(
        externalID: String?,
        objectID: ObjectID?,
        objectTypes: [String]?,
        coreTypes: [CoreType]?,
        acceptsEmptyIDs: Bool = false
    ) throws(CommunicationError) {
        self.externalID = externalID
        self.objectID = objectID
        self.objectTypes = objectTypes
        self.coreTypes = coreTypes
        if let reason = self.invalidReason(acceptingEmptyIDs: acceptsEmptyIDs) {
            throw CommunicationError(.invalidArgument, reason)
        }
    }

    /// Discovers the object with `objectID`.
    public static func byObjectID(_ objectID: ObjectID) throws -> DiscoverEvent {
        try DiscoverEvent(externalID: nil, objectID: objectID, objectTypes: nil, coreTypes: nil)
    }

    /// Discovers objects with `externalID`, optionally restricted to object or core types.
    public static func byExternalID(
        _ externalID: String,
        objectTypes: [String]? = nil,
        coreTypes: [CoreType]? = nil
    ) throws -> DiscoverEvent {
        try DiscoverEvent(externalID: externalID, objectID: nil, objectTypes: objectTypes, coreTypes: coreTypes)
    }

    /// Discovers the object with both `externalID` and `objectID`.
    public static func byExternalAndObjectID(externalID: String, objectID: ObjectID) throws -> DiscoverEvent {
        try DiscoverEvent(externalID: externalID, objectID: objectID, objectTypes: nil, coreTypes: nil)
    }

    /// Discovers objects of any of `objectTypes`.
    public static func byObjectTypes(_ objectTypes: [String]) throws -> DiscoverEvent {
        try DiscoverEvent(externalID: nil, objectID: nil, objectTypes: objectTypes, coreTypes: nil)
    }

    /// Discovers objects of any of `coreTypes`.
    public static func byCoreTypes(_ coreTypes: [CoreType]) throws -> DiscoverEvent {
        try DiscoverEvent(externalID: nil, objectID: nil, objectTypes: nil, coreTypes: coreTypes)
    }

    /// Why the combination of parameters is invalid (protocol §2.3), or `nil`.
    ///
    /// A Discover built here may not carry an empty id, which no valid object has; a received one may,
    /// as coaty-js accepts it (``unusableValues`` says so).
    func invalidReason(acceptingEmptyIDs: Bool) -> String? {
        if !acceptingEmptyIDs {
            if let externalID, externalID.isEmpty { return "externalId must not be empty" }
            if let objectID, objectID.rawValue.isEmpty { return "objectId must not be empty" }
        }
        if let objectTypes, objectTypes.contains(where: \.isEmpty) { return "objectTypes must be non-empty strings" }
        switch (self.externalID != nil, self.objectID != nil, self.objectTypes != nil, self.coreTypes != nil) {
        case (false, true, false, false), (true, true, false, false), (true, false, _, _), (false, false, true, false),
            (false, false, false, true):
            return nil
        case (false, false, true, true):
            return "a Discover by types must not carry both objectTypes and coreTypes"
        case (false, false, false, false):
            return "a Discover needs an objectId, an externalId, objectTypes or coreTypes"
        default:
            return "a Discover by objectId must not carry types"
        }
    }

    /// What in this received Discover cannot be used as it stands, for diagnostics: an empty object id or
    /// external id, which no valid object has, so nothing resolves it.
    var unusableValues: [String] {
        var values: [String] = []
        if let objectID, objectID.rawValue.isEmpty {
            values.append("the Discover's objectId is empty, which no object has")
        }
        if let externalID, externalID.isEmpty {
            values.append("the Discover's externalId is empty, which no object has")
        }
        return values
    }

    /// Whether this discovers by external id only (no object id).
    public var isDiscoveringExternalID: Bool { self.externalID != nil && self.objectID == nil }
    /// Whether this discovers by object id only.
    public var isDiscoveringObjectID: Bool { self.externalID == nil && self.objectID != nil }
    /// Whether this discovers by external id and object id.
    public var isDiscoveringExternalAndObjectID: Bool { self.externalID != nil && self.objectID != nil }
    /// Whether this discovers by types only (neither id).
    public var isDiscoveringTypes: Bool { self.externalID == nil && self.objectID == nil }

    /// Whether `coreType` is one of the discovered core types.
    public func isCoreTypeCompatible(_ coreType: CoreType) -> Bool { self.coreTypes?.contains(coreType) ?? false }
    /// Whether `objectType` is one of the discovered object types.
    public func isObjectTypeCompatible(_ objectType: String) -> Bool {
        self.objectTypes?.contains(objectType) ?? false
    }

    /// Whether `object` satisfies every criterion of this Discover (the requester-side Resolve check).
    public func matches(_ object: CoatyObject) -> Bool {
        if let coreTypes, !coreTypes.contains(object.coreType) { return false }
        if let objectTypes, !objectTypes.contains(object.objectType) { return false }
        if let objectID, object.objectID != objectID { return false }
        if let externalID, object.externalID != externalID { return false }
        return true
    }

    /// Answers this received Discover.
    ///
    /// Enqueues the Resolve on `RSV/<identity>/<correlationID>` and returns without suspending.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidResponse`` if the
    ///   Resolve's object does not match this Discover, ``CommunicationError/Code/notRunning`` if this
    ///   Discover was not received by a manager (or its manager is gone).
    public func resolve(_ resolve: ResolveEvent) throws {
        if let reason = self.rejectionReason(for: resolve) {
            throw CommunicationError(.invalidResponse, reason)
        }
        guard let route = self.responseRoute else {
            throw CommunicationError(.notRunning, "this Discover was not received by a communication manager")
        }
        try route.send(.resolve, try EventCoding.encode(resolve.payload))
    }

    /// Why `resolve` does not fit this Discover, or `nil` (protocol §2.3, checked only when it has an object).
    func rejectionReason(for resolve: ResolveEvent) -> String? {
        guard let object = resolve.object else { return nil }
        return self.matches(object) ? nil : "resolved object \(object.objectID) does not match the Discover"
    }

    struct Payload: WirePayload {
        var externalId: String?
        var objectId: ObjectID?
        var objectTypes: [String]?
        var coreTypes: [CoreType]?

        enum CodingKeys: String, CodingKey { case externalId, objectId, objectTypes, coreTypes }

        init(externalId: String?, objectId: ObjectID?, objectTypes: [String]?, coreTypes: [CoreType]?) {
            self.externalId = externalId
            self.objectId = objectId
            self.objectTypes = objectTypes
            self.coreTypes = coreTypes
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            // Any string, even an empty one, as coaty-js takes it (never `null`).
            self.externalId =
                container.contains(.externalId) ? try container.decode(String.self, forKey: .externalId) : nil
            self.objectId = container.contains(.objectId) ? try container.decode(ObjectID.self, forKey: .objectId) : nil
            self.objectTypes = try container.decodeNonEmptyStrings(forKey: .objectTypes)
            self.coreTypes =
                container.contains(.coreTypes) ? try container.decode([CoreType].self, forKey: .coreTypes) : nil
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(self.externalId, forKey: .externalId)
            try container.encodeIfPresent(self.objectId, forKey: .objectId)
            try container.encodeIfPresent(self.objectTypes, forKey: .objectTypes)
            try container.encodeIfPresent(self.coreTypes, forKey: .coreTypes)
        }
    }

    var payload: Payload {
        Payload(
            externalId: self.externalID,
            objectId: self.objectID,
            objectTypes: self.objectTypes,
            coreTypes: self.coreTypes
        )
    }

    init(payload: Payload, origin: EventOrigin) throws(CommunicationError) {
        do {
            try self.init(
                externalID: payload.externalId,
                objectID: payload.objectId,
                objectTypes: payload.objectTypes,
                coreTypes: payload.coreTypes,
                acceptsEmptyIDs: true
            )
        } catch {
            throw .invalid(error.message)
        }
        self.origin = origin
    }
}
