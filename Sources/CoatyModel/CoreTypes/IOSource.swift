/// A producer of IO values (`coaty.IoSource`), routed to ``IOActor``s with a compatible value type.
open class IOSource: IOPoint, @unchecked Sendable {
    /// `coaty.IoSource`.
    override open class var objectType: String { CoreType.ioSource.objectType }
    /// CoreType/ioSource.
    override public class var coreType: CoreType { .ioSource }
    /// The IO source's own JSON keys.
    override open class var propertyKeys: Set<String> { Self.keys }
    private static let keys = IOPoint.pointKeys.union(CodingKeys.allCases.map(\.rawValue))

    /// How values are throttled.
    public let updateStrategy: IOSourceUpdateStrategy?

    /// Creates an IO source.
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
        self.updateStrategy = updateStrategy
        super.init(
            pointObjectType: objectType,
            objectID: objectID,
            name: name,
            valueType: valueType,
            useRawIoValues: useRawIoValues,
            updateRate: updateRate,
            externalRoute: externalRoute,
            externalID: externalID,
            parentObjectID: parentObjectID,
            locationID: locationID,
            isDeactivated: isDeactivated,
            customProperties: customProperties
        )
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case updateStrategy
    }

    /// Decodes and validates the IO source as coaty-js does (see ``IOPoint/init(from:)``).
    ///
    /// - Throws: `DecodingError` naming the field: `updateStrategy` not a strategy number or `null`, or
    ///   any IO point or base-field error.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.updateStrategy = try container.decodeStrictIfPresent(IOSourceUpdateStrategy.self, forKey: .updateStrategy)
        try super.init(from: decoder)
    }

    /// Encodes the IO source; absent optionals are omitted.
    override open func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(self.updateStrategy, forKey: .updateStrategy)
    }
}
