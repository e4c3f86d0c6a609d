/// A SensorThings sensor (`coaty.sensorThings.Sensor`, core type `CoatyObject`): an instrument that
/// observes one property.
open class Sensor: CoatyObject, @unchecked Sendable {
    /// `coaty.sensorThings.Sensor`.
    override open class var objectType: String { "coaty.sensorThings.Sensor" }
    /// The object's own JSON keys.
    override open class var propertyKeys: Set<String> { Self.keys }
    private static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    /// A description (`description` on the wire).
    public let sensorDescription: String
    /// How to interpret `metadata`, such as `"application/pdf"`.
    public let encodingType: String
    /// The detailed description of the sensor, in `encodingType`.
    public let metadata: AnyCodable
    /// The unit of the measurements.
    public let unitOfMeasurement: UnitOfMeasurement
    /// The OGC observation type URI of the results.
    public let observationType: String
    /// The area of all features of interest observed (a GeoJSON polygon; a JSON object).
    public let observedArea: AnyCodable?
    /// The interval of the phenomenon times of all observations.
    public let phenomenonTime: TimestampInterval?
    /// The interval of the result times of all observations.
    public let resultTime: TimestampInterval?
    /// The observed property.
    public let observedProperty: ObservedProperty

    /// A unit of measurement following UCUM. All fields are absent for unitless observations.
    public struct UnitOfMeasurement: Sendable, Hashable, Codable {
        /// The full name, such as "Degree Celsius".
        public var name: String?
        /// The symbol, such as "degC".
        public var symbol: String?
        /// A URI defining the unit.
        public var definition: String?

        /// Creates a unit.
        public init(name: String? = nil, symbol: String? = nil, definition: String? = nil) {
            self.name = name
            self.symbol = symbol
            self.definition = definition
        }

        private enum CodingKeys: String, CodingKey {
            case name, symbol, definition
        }

        /// Decodes a unit.
        ///
        /// - Throws: `DecodingError` if a field is `null` or not a string.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.name = try container.decodeStrictIfPresent(String.self, forKey: .name)
            self.symbol = try container.decodeStrictIfPresent(String.self, forKey: .symbol)
            self.definition = try container.decodeStrictIfPresent(String.self, forKey: .definition)
        }
    }

    /// The phenomenon a sensor observes.
    public struct ObservedProperty: Sendable, Hashable, Codable {
        /// A label; never empty.
        public var name: String
        /// A URI defining the property.
        public var definition: String
        /// A description.
        public var description: String

        /// Creates an observed property.
        public init(name: String, definition: String, description: String) {
            self.name = name
            self.definition = definition
            self.description = description
        }

        private enum CodingKeys: String, CodingKey {
            case name, definition, description
        }

        /// Decodes an observed property.
        ///
        /// - Throws: `DecodingError` if a field is missing or not a string, or `name` is empty.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.name = try container.decodeNonEmptyString(forKey: .name)
            self.definition = try container.decode(String.self, forKey: .definition)
            self.description = try container.decode(String.self, forKey: .description)
        }
    }

    /// Creates the object.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type; defaults to `coaty.sensorThings.Sensor`.
    ///   - objectID: The identity; defaults to a new random UUID.
    ///   - name: A human-readable name.
    ///   - sensorDescription: A description.
    ///   - encodingType: How to interpret `metadata`.
    ///   - metadata: The detailed description.
    ///   - unitOfMeasurement: The unit of the measurements.
    ///   - observationType: The observation type URI.
    ///   - observedProperty: The observed property.
    ///   - observedArea: The observed area.
    ///   - phenomenonTime: The phenomenon-time interval.
    ///   - resultTime: The result-time interval.
    ///   - externalID: An identity in an external system.
    ///   - parentObjectID: The object this one belongs to.
    ///   - locationID: The location of this object.
    ///   - isDeactivated: Whether the object is deactivated.
    ///   - customProperties: Extra properties.
    public init(
        objectType: String? = nil,
        objectID: ObjectID = .random(),
        name: String,
        sensorDescription: String,
        encodingType: String,
        metadata: AnyCodable,
        unitOfMeasurement: UnitOfMeasurement,
        observationType: String,
        observedProperty: ObservedProperty,
        observedArea: AnyCodable? = nil,
        phenomenonTime: TimestampInterval? = nil,
        resultTime: TimestampInterval? = nil,
        externalID: String? = nil,
        parentObjectID: ObjectID? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
        self.sensorDescription = sensorDescription
        self.encodingType = encodingType
        self.metadata = metadata
        self.unitOfMeasurement = unitOfMeasurement
        self.observationType = observationType
        self.observedProperty = observedProperty
        self.observedArea = observedArea
        self.phenomenonTime = phenomenonTime
        self.resultTime = resultTime
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
        case sensorDescription = "description", encodingType, metadata, unitOfMeasurement, observationType, observedArea
        case phenomenonTime, resultTime, observedProperty
    }

    /// Decodes the object. coaty-js validates SensorThings objects only as plain `CoatyObject`s; this
    /// also requires the fields its TypeScript interface declares as required.
    ///
    /// - Throws: `DecodingError` naming a missing or mistyped field, `observedArea` not an object, an
    ///   `observedProperty` with an empty name, a unit field `null`, an invalid time interval, an optional
    ///   field `null`, or any base-field error (coaty-js `SensorThingsTypes.isSensor`).
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.sensorDescription = try container.decode(String.self, forKey: .sensorDescription)
        self.encodingType = try container.decode(String.self, forKey: .encodingType)
        self.metadata = try container.decode(AnyCodable.self, forKey: .metadata)
        self.unitOfMeasurement = try container.decode(UnitOfMeasurement.self, forKey: .unitOfMeasurement)
        self.observationType = try container.decode(String.self, forKey: .observationType)
        self.observedArea = try container.decodePlainObjectIfPresent(forKey: .observedArea).map(AnyCodable.object)
        self.phenomenonTime = try container.decodeStrictIfPresent(TimestampInterval.self, forKey: .phenomenonTime)
        self.resultTime = try container.decodeStrictIfPresent(TimestampInterval.self, forKey: .resultTime)
        self.observedProperty = try container.decode(ObservedProperty.self, forKey: .observedProperty)
        try super.init(from: decoder)
    }

    /// Encodes the object; absent optionals are omitted.
    override open func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.sensorDescription, forKey: .sensorDescription)
        try container.encode(self.encodingType, forKey: .encodingType)
        try container.encode(self.metadata, forKey: .metadata)
        try container.encode(self.unitOfMeasurement, forKey: .unitOfMeasurement)
        try container.encode(self.observationType, forKey: .observationType)
        try container.encodeIfPresent(self.observedArea, forKey: .observedArea)
        try container.encodeIfPresent(self.phenomenonTime, forKey: .phenomenonTime)
        try container.encodeIfPresent(self.resultTime, forKey: .resultTime)
        try container.encode(self.observedProperty, forKey: .observedProperty)
    }
}
