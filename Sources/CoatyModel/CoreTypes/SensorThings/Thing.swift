/// A SensorThings thing (`coaty.sensorThings.Thing`, core type `CoatyObject`): a physical or virtual object
/// that can be identified and integrated into communication networks.
open class Thing: CoatyObject, @unchecked Sendable {
    /// `coaty.sensorThings.Thing`.
    override open class var objectType: String { "coaty.sensorThings.Thing" }
    /// The object's own JSON keys.
    override open class var propertyKeys: Set<String> { Self.keys }
    private static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    /// A short description (`description` on the wire).
    public let thingDescription: String
    /// Application-annotated properties.
    public let properties: [String: AnyCodable]?

    /// Creates the object.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type; defaults to `coaty.sensorThings.Thing`.
    ///   - objectID: The identity; defaults to a new random UUID.
    ///   - name: A human-readable name.
    ///   - thingDescription: A short description.
    ///   - properties: Application-annotated properties.
    ///   - externalID: An identity in an external system.
    ///   - parentObjectID: The object this one belongs to.
    ///   - locationID: The location of this object.
    ///   - isDeactivated: Whether the object is deactivated.
    ///   - customProperties: Extra properties.
    public init(
        objectType: String? = nil,
        objectID: ObjectID = .random(),
        name: String,
        thingDescription: String,
        properties: [String: AnyCodable]? = nil,
        externalID: String? = nil,
        parentObjectID: ObjectID? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
        self.thingDescription = thingDescription
        self.properties = properties
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

    /// Keys that are validated but kept as custom properties.
    private enum CheckedKeys: String, CodingKey {
        case locations
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case thingDescription = "description", properties
    }

    /// Decodes the object. coaty-js validates SensorThings objects only as plain `CoatyObject`s; this
    /// also requires the fields its TypeScript interface declares as required.
    ///
    /// `locations` is not a declared field (it stays in ``CoatyObject/customProperties``), but coaty-js's
    /// `SensorThingsTypes.isThing` requires it to be an array of non-empty strings when present.
    ///
    /// - Throws: `DecodingError` naming a missing or mistyped field, `locations` not an array of non-empty
    ///   strings, an optional field `null`, or any base-field error.
    public required init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: CheckedKeys.self).decodeStringArrayIfPresent(forKey: .locations)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.thingDescription = try container.decode(String.self, forKey: .thingDescription)
        self.properties = try container.decodePlainObjectIfPresent(forKey: .properties)
        try super.init(from: decoder)
    }

    /// Encodes the object; absent optionals are omitted.
    override open func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.thingDescription, forKey: .thingDescription)
        try container.encodeIfPresent(self.properties, forKey: .properties)
    }
}
