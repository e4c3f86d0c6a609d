/// What ``IOSource`` and ``IOActor`` share (coaty-js `IoPoint`): the type of the values, whether they
/// are raw bytes, the desired update rate and an optional external route.
///
/// Not instantiated on its own: objects are always an ``IOSource`` or an ``IOActor``, which set the
/// object type and core type.
open class IOPoint: CoatyObject, @unchecked Sendable {
    /// The IO point's own JSON keys.
    override open class var propertyKeys: Set<String> { Self.pointKeys }
    static let pointKeys = Set(CodingKeys.allCases.map(\.rawValue))

    /// The type of the values, such as `"com.example.Temperature[Celsius]"`; never empty.
    public let valueType: String
    /// Whether values are raw bytes instead of JSON.
    public let useRawIoValues: Bool?
    /// The desired interval between values, in milliseconds; never negative.
    public let updateRate: Double?
    /// An external MQTT topic that carries the values instead of a Coaty IO route.
    public let externalRoute: String?

    /// The designated initialiser of the subclasses (a distinct first label keeps their public
    /// initialisers from overriding it).
    init(
        pointObjectType objectType: String?,
        objectID: ObjectID,
        name: String,
        valueType: String,
        useRawIoValues: Bool?,
        updateRate: Double?,
        externalRoute: String?,
        externalID: String?,
        parentObjectID: ObjectID?,
        locationID: ObjectID?,
        isDeactivated: Bool?,
        customProperties: [String: AnyCodable]
    ) {
        self.valueType = valueType
        self.useRawIoValues = useRawIoValues
        self.updateRate = updateRate
        self.externalRoute = externalRoute
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
        case valueType, useRawIoValues, updateRate, externalRoute
    }

    /// Decodes and validates the IO point's fields as coaty-js does.
    ///
    /// - Throws: `DecodingError` naming the field: `valueType` missing or empty, `updateRate` negative or not a
    ///   number, `externalRoute`/`useRawIoValues` of the wrong type, an optional field `null`, or any
    ///   base-field error.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.valueType = try container.decodeNonEmptyString(forKey: .valueType)
        self.useRawIoValues = try container.decodeStrictIfPresent(Bool.self, forKey: .useRawIoValues)
        self.updateRate = try container.decodeNonNegativeIfPresent(forKey: .updateRate)
        self.externalRoute = try container.decodeStrictIfPresent(String.self, forKey: .externalRoute)
        try super.init(from: decoder)
    }

    /// Encodes the IO point; absent optionals are omitted.
    override open func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.valueType, forKey: .valueType)
        try container.encodeIfPresent(self.useRawIoValues, forKey: .useRawIoValues)
        try container.encodeNumberIfPresent(self.updateRate, forKey: .updateRate)
        try container.encodeIfPresent(self.externalRoute, forKey: .externalRoute)
    }
}
