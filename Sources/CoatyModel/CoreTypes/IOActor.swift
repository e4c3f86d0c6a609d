/// A consumer of IO values (`coaty.IoActor`), fed by ``IOSource``s with a compatible value type.
open class IOActor: IOPoint, @unchecked Sendable {
    /// `coaty.IoActor`.
    override open class var objectType: String { CoreType.ioActor.objectType }
    /// CoreType/ioActor.
    override public class var coreType: CoreType { .ioActor }

    /// Creates an IO actor.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type; defaults to `coaty.IoActor`.
    ///   - objectID: The identity; defaults to a new random UUID.
    ///   - name: A human-readable name.
    ///   - valueType: The type of the values.
    ///   - useRawIoValues: Whether values are raw bytes.
    ///   - updateRate: The desired interval in milliseconds.
    ///   - externalRoute: An external topic for the values.
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
        externalID: String? = nil,
        parentObjectID: ObjectID? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
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

    /// Decodes and validates the IO actor as coaty-js does (see ``IOPoint/init(from:)``).
    public required init(from decoder: any Decoder) throws {
        try super.init(from: decoder)
    }
}
