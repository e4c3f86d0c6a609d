/// The set of ``CoatyObject`` subclasses an agent decodes polymorphically, keyed by object type.
///
/// An app builds one family at bootstrap, registers each custom class once, and hands it to its
/// configuration. It is an immutable value: there is no global registry. Decoding always falls back to
/// the built-in core types: an object of an unknown object type decodes as the class of its core type
/// and keeps its object type and extra fields.
///
/// ```swift
/// let family: ObjectFamily = [Light.self, Switch.self]
/// ```
public struct ObjectFamily: Sendable, ExpressibleByArrayLiteral {
    private var classes: [String: CoatyObject.Type] = [:]

    /// Creates a family of the built-in core types and `types`.
    public init(_ types: [CoatyObject.Type] = []) {
        for type in types { self.register(type) }
    }

    public init(arrayLiteral elements: CoatyObject.Type...) {
        self.init(elements)
    }

    /// Registers `type` under its class property `objectType`, replacing an earlier registration.
    public mutating func register(_ type: CoatyObject.Type) {
        self.classes[type.objectType] = type
    }

    /// The class registered for `objectType`, if any.
    public func registeredClass(for objectType: String) -> CoatyObject.Type? {
        self.classes[objectType]
    }

    /// Decodes one object, choosing its class from the `objectType` field and falling back to the class
    /// of its `coreType`.
    ///
    /// - Throws: `DecodingError` if `objectType` or `coreType` is missing, the core type is unknown, or
    ///   the chosen class rejects the object.
    public func decodeObject(from decoder: any Decoder) throws -> CoatyObject {
        let container = try decoder.container(keyedBy: CoatyObject.CodingKeys.self)
        let objectType = try container.decode(String.self, forKey: .objectType)
        if let type = self.classes[objectType] { return try type.init(from: decoder) }
        let coreTypeName = try container.decode(String.self, forKey: .coreType)
        guard CoreType(rawValue: coreTypeName) == .coatyObject else {
            // TODO(model): fall back to the class of every core type.
            throw DecodingError.dataCorruptedError(
                forKey: .coreType, in: container, debugDescription: "unknown core type '\(coreTypeName)'")
        }
        return try CoatyObject(from: decoder)
    }

    /// Decodes a JSON array of objects element by element, each by its own discriminator.
    ///
    /// - Throws: `DecodingError` naming the index of the first element that cannot be decoded.
    public func decodeObjects(from decoder: any Decoder) throws -> [CoatyObject] {
        var container = try decoder.unkeyedContainer()
        var objects: [CoatyObject] = []
        while !container.isAtEnd {
            objects.append(try self.decodeObject(from: container.superDecoder()))
        }
        return objects
    }
}

extension CodingUserInfoKey {
    /// The key under which decoders find the ``ObjectFamily`` to use.
    public static let objectFamily = CodingUserInfoKey(rawValue: "coaty.objectFamily")!
}
