/// A SensorThings observation (`coaty.sensorThings.Observation`, core type `CoatyObject`): the act of
/// measuring a property. Named `SensorObservation` to stay clear of the toolchain's `Observation` module.
open class SensorObservation: CoatyObject, @unchecked Sendable {
    /// `coaty.sensorThings.Observation`.
    override open class var objectType: String { "coaty.sensorThings.Observation" }
    /// The object's own JSON keys.
    override open class var propertyKeys: Set<String> { Self.keys }
    private static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    /// When the observation happened, in milliseconds since the epoch.
    public let phenomenonTime: Double
    /// The observed value.
    public let result: AnyCodable
    /// When the result was generated, in milliseconds since the epoch.
    public let resultTime: Double
    /// The quality of the result.
    public let resultQuality: [String]?
    /// The period during which the result may be used.
    public let validTime: TimestampInterval?
    /// Environmental conditions during measurement.
    public let parameters: [String: AnyCodable]?
    /// The object id of the observed feature of interest or location.
    public let featureOfInterestID: ObjectID?

    /// Creates the object.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type; defaults to `coaty.sensorThings.Observation`.
    ///   - objectID: The identity; defaults to a new random UUID.
    ///   - name: A human-readable name.
    ///   - phenomenonTime: When the observation happened.
    ///   - result: The observed value.
    ///   - resultTime: When the result was generated.
    ///   - resultQuality: The quality of the result.
    ///   - validTime: When the result may be used.
    ///   - parameters: Environmental conditions.
    ///   - featureOfInterestID: The observed feature of interest.
    ///   - externalID: An identity in an external system.
    ///   - parentObjectID: The object this one belongs to.
    ///   - locationID: The location of this object.
    ///   - isDeactivated: Whether the object is deactivated.
    ///   - customProperties: Extra properties.
    public init(
        objectType: String? = nil,
        objectID: ObjectID = .random(),
        name: String,
        phenomenonTime: Double,
        result: AnyCodable,
        resultTime: Double,
        resultQuality: [String]? = nil,
        validTime: TimestampInterval? = nil,
        parameters: [String: AnyCodable]? = nil,
        featureOfInterestID: ObjectID? = nil,
        externalID: String? = nil,
        parentObjectID: ObjectID? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
        self.phenomenonTime = phenomenonTime
        self.result = result
        self.resultTime = resultTime
        self.resultQuality = resultQuality
        self.validTime = validTime
        self.parameters = parameters
        self.featureOfInterestID = featureOfInterestID
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
        case phenomenonTime, result, resultTime, resultQuality, validTime, parameters
        case featureOfInterestID = "featureOfInterestId"
    }

    /// Decodes the object. coaty-js validates SensorThings objects only as plain `CoatyObject`s; this
    /// also requires the fields its TypeScript interface declares as required.
    ///
    /// - Throws: `DecodingError` naming a missing or mistyped field, `phenomenonTime` or `resultTime`
    ///   negative, an empty string in `resultQuality`, an invalid `validTime`, an optional field `null`, or
    ///   any base-field error (coaty-js `SensorThingsTypes.isObservation`).
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.phenomenonTime = try container.decodeNonNegative(forKey: .phenomenonTime)
        self.result = try container.decode(AnyCodable.self, forKey: .result)
        self.resultTime = try container.decodeNonNegative(forKey: .resultTime)
        self.resultQuality = try container.decodeStringArrayIfPresent(forKey: .resultQuality)
        self.validTime = try container.decodeStrictIfPresent(TimestampInterval.self, forKey: .validTime)
        self.parameters = try container.decodePlainObjectIfPresent(forKey: .parameters)
        self.featureOfInterestID = try container.decodeNonEmptyIDIfPresent(forKey: .featureOfInterestID)
        try super.init(from: decoder)
    }

    /// Encodes the object; absent optionals are omitted.
    override open func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeNumber(self.phenomenonTime, forKey: .phenomenonTime)
        try container.encode(self.result, forKey: .result)
        try container.encodeNumber(self.resultTime, forKey: .resultTime)
        try container.encodeIfPresent(self.resultQuality, forKey: .resultQuality)
        try container.encodeIfPresent(self.validTime, forKey: .validTime)
        try container.encodeIfPresent(self.parameters, forKey: .parameters)
        try container.encodeIfPresent(self.featureOfInterestID, forKey: .featureOfInterestID)
    }
}
