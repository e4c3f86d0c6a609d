/// A SensorThings feature of interest (`coaty.sensorThings.FeatureOfInterest`, core type `CoatyObject`):
/// the feature whose property an observation measures.
open class FeatureOfInterest: CoatyObject, @unchecked Sendable {
    /// `coaty.sensorThings.FeatureOfInterest`.
    override open class var objectType: String { "coaty.sensorThings.FeatureOfInterest" }
    /// The object's own JSON keys.
    override open class var propertyKeys: Set<String> { Self.keys }
    private static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    /// A description (`description` on the wire).
    public let featureDescription: String
    /// The encoding of `metadata`, such as `"application/vnd.geo+json"`.
    public let encodingType: String
    /// The detailed description of the feature, in `encodingType`.
    public let metadata: AnyCodable

    /// Creates the object.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type; defaults to `coaty.sensorThings.FeatureOfInterest`.
    ///   - objectID: The identity; defaults to a new random UUID.
    ///   - name: A human-readable name.
    ///   - featureDescription: A description.
    ///   - encodingType: The encoding of `metadata`.
    ///   - metadata: The detailed description.
    ///   - externalID: An identity in an external system.
    ///   - parentObjectID: The object this one belongs to.
    ///   - locationID: The location of this object.
    ///   - isDeactivated: Whether the object is deactivated.
    ///   - customProperties: Extra properties.
    public init(
        objectType: String? = nil,
        objectID: ObjectID = .random(),
        name: String,
        featureDescription: String,
        encodingType: String,
        metadata: AnyCodable,
        externalID: String? = nil,
        parentObjectID: ObjectID? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
        self.featureDescription = featureDescription
        self.encodingType = encodingType
        self.metadata = metadata
        super.init(
            objectType: objectType,
            objectID: objectID,
            name: name,
            externalID: externalID,
            parentObjectID: parentObjectID,
            locationID: locationID,
            isDeactivated: isDeactivated,
            customProperties: customProperties
        )
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case featureDescription = "description", encodingType, metadata
    }

    /// Decodes the object. coaty-js validates SensorThings objects only as plain `CoatyObject`s; this
    /// also requires the fields its TypeScript interface declares as required.
    ///
    /// - Throws: `DecodingError` naming a missing or mistyped field, an optional field `null`, or any
    ///   base-field error.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.featureDescription = try container.decode(String.self, forKey: .featureDescription)
        self.encodingType = try container.decode(String.self, forKey: .encodingType)
        self.metadata = try container.decode(AnyCodable.self, forKey: .metadata)
        try super.init(from: decoder)
    }

    /// Encodes the object; absent optionals are omitted.
    override open func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.featureDescription, forKey: .featureDescription)
        try container.encode(self.encodingType, forKey: .encodingType)
        try container.encode(self.metadata, forKey: .metadata)
    }
}
