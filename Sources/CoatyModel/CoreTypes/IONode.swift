/// An IO node (`coaty.IoNode`): the IO sources and actors an agent offers in one IO context.
///
/// Its ``CoatyObject/name`` is the IO context name. The nested sources and actors are objects in their
/// own right; they decode through the ``ObjectFamily`` (so a source with a custom object type and core
/// type `IoSource` becomes an ``IOSource`` keeping its extra fields) and take part in identity tracking.
open class IONode: CoatyObject, @unchecked Sendable {
    /// `coaty.IoNode`.
    override open class var objectType: String { CoreType.ioNode.objectType }
    /// ``CoreType/ioNode``.
    override public class var coreType: CoreType { .ioNode }
    /// The node's own JSON keys.
    override open class var propertyKeys: Set<String> { Self.keys }
    private static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    /// The IO sources of this node; `nil` when the JSON omits them.
    public let ioSources: [IOSource]?
    /// The IO actors of this node; `nil` when the JSON omits them.
    public let ioActors: [IOActor]?
    /// Node characteristics, as a JSON object.
    public let characteristics: [String: AnyCodable]?

    /// Creates an IO node.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type; defaults to `coaty.IoNode`.
    ///   - objectID: The identity; defaults to a new random UUID.
    ///   - name: The IO context name.
    ///   - ioSources: The node's IO sources.
    ///   - ioActors: The node's IO actors.
    ///   - characteristics: Node characteristics.
    ///   - externalID: An identity in an external system.
    ///   - parentObjectID: The object this one belongs to (usually the agent's identity).
    ///   - locationID: The location of this object.
    ///   - isDeactivated: Whether the object is deactivated.
    ///   - customProperties: Extra properties.
    public init(
        objectType: String? = nil,
        objectID: ObjectID = .random(),
        name: String,
        ioSources: [IOSource]? = nil,
        ioActors: [IOActor]? = nil,
        characteristics: [String: AnyCodable]? = nil,
        externalID: String? = nil,
        parentObjectID: ObjectID? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
        self.ioSources = ioSources
        self.ioActors = ioActors
        self.characteristics = characteristics
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
        case ioSources, ioActors, characteristics
    }

    /// Decodes and validates the node as coaty-js does.
    ///
    /// - Throws: `DecodingError` naming the field: an element of `ioSources`/`ioActors` that is not a valid
    ///   IO source/actor (named by index, regardless of the element-failure policy, as coaty-js rejects the
    ///   whole node), `characteristics` not an object, an optional field `null`, or any base-field error.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.ioSources = try Self.decodeStrictArray(IOSource.self, forKey: .ioSources, in: container)
        self.ioActors = try Self.decodeStrictArray(IOActor.self, forKey: .ioActors, in: container)
        self.characteristics = try container.decodePlainObjectIfPresent(forKey: .characteristics)
        try super.init(from: decoder)
    }

    /// Decodes an array of objects whose every element must be valid (coaty-js `isObjectArray`).
    private static func decodeStrictArray<T: CoatyObject>(
        _ type: T.Type,
        forKey key: CodingKeys,
        in container: KeyedDecodingContainer<CodingKeys>
    ) throws -> [T]? {
        guard container.contains(key) else { return nil }
        let decoder = try container.superDecoder(forKey: key)
        let family = ObjectFamily.current(in: decoder)
        var elements = try decoder.unkeyedContainer()
        var result: [T] = []
        while !elements.isAtEnd {
            let element = try elements.superDecoder()
            let object = try family.decodeObject(from: element)
            result.append(try CoatyJSONDecoder.cast(object, to: T.self, codingPath: element.codingPath))
        }
        return result
    }

    /// Encodes the node; absent optionals are omitted.
    override open func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeObjectsIfPresent(self.ioSources, forKey: .ioSources)
        try container.encodeObjectsIfPresent(self.ioActors, forKey: .ioActors)
        try container.encodeIfPresent(self.characteristics, forKey: .characteristics)
    }
}
