/// A snapshot (`coaty.Snapshot`) of another object at a point in time.
///
/// Its ``CoatyObject/parentObjectID`` is mandatory here: the id of the snapshotted object.
open class Snapshot: CoatyObject, @unchecked Sendable {
    /// `coaty.Snapshot`.
    override open class var objectType: String { CoreType.snapshot.objectType }
    /// ``CoreType/snapshot``.
    override public class var coreType: CoreType { .snapshot }
    /// The snapshot's own JSON keys.
    override open class var propertyKeys: Set<String> { Self.keys }
    private static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    /// When the snapshot was taken, in milliseconds since the Unix epoch (never 0).
    public let creationTimestamp: Double
    /// Who took it.
    public let creatorID: ObjectID
    /// Tags (non-empty strings).
    public let tags: [String]?
    /// The snapshotted object, decoded polymorphically.
    ///
    /// With identity tracking, it is never shared with objects outside the snapshot: it is one version
    /// of its object, and a history of snapshots keeps every version.
    public let object: CoatyObject

    /// Creates a snapshot of `object`; its parent object id is the object's id.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type; defaults to `coaty.Snapshot`.
    ///   - objectID: The identity; defaults to a new random UUID.
    ///   - name: A human-readable name.
    ///   - object: The snapshotted object.
    ///   - creationTimestamp: When the snapshot was taken, in milliseconds since the epoch.
    ///   - creatorID: Who took it.
    ///   - tags: Tags.
    ///   - externalID: An identity in an external system.
    ///   - locationID: The location of this object.
    ///   - isDeactivated: Whether the object is deactivated.
    ///   - customProperties: Extra properties.
    public init(
        objectType: String? = nil,
        objectID: ObjectID = .random(),
        name: String,
        object: CoatyObject,
        creationTimestamp: Double,
        creatorID: ObjectID,
        tags: [String]? = nil,
        externalID: String? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
        self.object = object
        self.creationTimestamp = creationTimestamp
        self.creatorID = creatorID
        self.tags = tags
        super.init(
            objectType: objectType,
            objectID: objectID,
            name: name,
            externalID: externalID,
            parentObjectID: object.objectID,
            locationID: locationID,
            isDeactivated: isDeactivated,
            customProperties: customProperties
        )
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case creationTimestamp, creatorID = "creatorId", tags, object
    }

    /// Decodes and validates a snapshot as coaty-js does.
    ///
    /// - Throws: `DecodingError` naming the field: `parentObjectId` missing, `creationTimestamp` missing,
    ///   0 or not a number, `creatorId` missing or empty, a tag empty, `object` missing or not a valid
    ///   object, or any base-field error.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let creationTimestamp = try container.decode(Double.self, forKey: .creationTimestamp)
        guard creationTimestamp != 0, !creationTimestamp.isNaN else {
            throw container.invalid(.creationTimestamp, "must be a non-zero number")
        }
        self.creationTimestamp = creationTimestamp
        self.creatorID = try container.decodeNonEmptyID(forKey: .creatorID)
        self.tags = try container.decodeStringArrayIfPresent(forKey: .tags)
        // The object as it was when the snapshot was taken: it shares no instance with the rest of the
        // decode (another snapshot of the same object holds another version).
        self.object = try ObjectDecodingOptions.current(in: decoder).isolatingIdentities {
            try container.decodeObject(CoatyObject.self, forKey: .object)
        }
        try super.init(from: decoder)
        guard self.parentObjectID != nil else {
            let base = try decoder.container(keyedBy: CoatyObject.CodingKeys.self)
            throw DecodingError.keyNotFound(
                CoatyObject.CodingKeys.parentObjectID,
                DecodingError.Context(
                    codingPath: base.codingPath,
                    debugDescription: "parentObjectId is required for a Snapshot (the snapshotted object's id)"
                )
            )
        }
    }

    /// Encodes the snapshot; absent optionals are omitted.
    override open func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeNumber(self.creationTimestamp, forKey: .creationTimestamp)
        try container.encode(self.creatorID, forKey: .creatorID)
        try container.encodeIfPresent(self.tags, forKey: .tags)
        try container.encodeObject(self.object, forKey: .object)
    }
}
