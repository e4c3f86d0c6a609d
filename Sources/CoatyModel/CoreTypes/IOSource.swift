/// A producer of IO values (`coaty.IoSource`), routed to ``IOActor``s with a compatible value type.
public final class IOSource: CoatyObject, @unchecked Sendable {
    /// `coaty.IoSource`.
    override public class var objectType: String { CoreType.ioSource.objectType }
    /// CoreType/ioSource.
    override public class var coreType: CoreType { .ioSource }
    /// The IO point's own JSON keys.
    override public class var propertyKeys: Set<String> { Self.keys }
    private static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    /// The type of the values, such as `"com.example.Temperature[Celsius]"`; never empty.
    public let valueType: String
    /// Whether values are raw bytes instead of JSON.
    public let useRawIoValues: Bool?
    /// The desired interval between values, in milliseconds; never negative.
    public let updateRate: Double?
    /// An external MQTT topic that carries the values instead of a Coaty IO route.
    public let externalRoute: String?
    /// How values are throttled.
    public let updateStrategy: IOSourceUpdateStrategy?

    /// Creates an IO point.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type; defaults to `coaty.IoSource`.
    ///   - objectID: The identity; defaults to a new random UUID.
    ///   - name: A human-readable name.
    ///   - valueType: The type of the values.
    ///   - useRawIoValues: Whether values are raw bytes.
    ///   - updateRate: The desired interval in milliseconds.
    ///   - externalRoute: An external topic for the values.
    ///   - updateStrategy: How values are throttled.
    ///   - externalID: An identity in an external system.
    ///   - parentObjectID: The object this one belongs to.
    ///   - locationID: The location of this object.
    ///   - isDeactivated: Whether the object is deactivated.
    ///   - customProperties: Extra properties.
    public init(
        objectType: String? = nil,
        objectID: ObjectID = .random(),
        name: String,
        valueType: String,
        useRawIoValues: Bool? = nil,
        updateRate: Double? = nil,
        externalRoute: String? = nil,
        updateStrategy: IOSourceUpdateStrategy? = nil,
        externalID: String? = nil,
        parentObjectID: ObjectID? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
        self.valueType = valueType
        self.useRawIoValues = useRawIoValues
        self.updateRate = updateRate
        self.externalRoute = externalRoute
        self.updateStrategy = updateStrategy
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
        case valueType, useRawIoValues, updateRate, externalRoute, updateStrategy
    }

    /// Decodes and validates the IO point as coaty-js does.
    ///
    /// - Throws: `DecodingError` naming the field: `valueType` missing or empty, `updateRate` negative or not a
    ///   number, `updateStrategy` not a strategy number, `externalRoute`/`useRawIoValues` of the wrong
    ///   type, an optional field `null`, or any base-field error.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.valueType = try container.decodeNonEmptyString(forKey: .valueType)
        self.useRawIoValues = try container.decodeStrictIfPresent(Bool.self, forKey: .useRawIoValues)
        self.updateRate = try container.decodeNonNegativeIfPresent(forKey: .updateRate)
        self.externalRoute = try container.decodeStrictIfPresent(String.self, forKey: .externalRoute)
        self.updateStrategy = try container.decodeStrictIfPresent(IOSourceUpdateStrategy.self, forKey: .updateStrategy)
        try super.init(from: decoder)
    }

    /// Encodes the IO point; absent optionals are omitted.
    override public func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.valueType, forKey: .valueType)
        try container.encodeIfPresent(self.useRawIoValues, forKey: .useRawIoValues)
        try container.encodeNumberIfPresent(self.updateRate, forKey: .updateRate)
        try container.encodeIfPresent(self.externalRoute, forKey: .externalRoute)
        try container.encodeIfPresent(self.updateStrategy, forKey: .updateStrategy)
    }
}
