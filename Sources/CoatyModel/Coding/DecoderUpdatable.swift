/// A class whose live instances a decode updates in place instead of replacing, so that an app's model
/// objects keep their identity when fresh data for them arrives.
///
/// Coaty objects are immutable: a changed object is a new ``CoatyObject`` with the same object id. An
/// app often keeps its own live model of those objects, for example a view model per light that a user
/// interface observes. Make that class `DecoderUpdatable` and register it in the ``ObjectFamily``
/// (`family.register(LiveLight.self)`): every decode of it (at the top, as a property, as
/// an array element) then finds the live instance with the JSON's id and calls ``update(from:)`` on it,
/// or makes a new instance when there is none. Instances are found among those of the current decode,
/// in the decode's ``ObjectDecodingOptions/factoryContext`` when it is an ``UpdatableInstanceStore``,
/// and in the ``ObjectIdentityMap`` of ``ObjectDecodingOptions/IdentityTracking/across(_:)``, which
/// remembers new instances (weakly) for later decodes.
///
/// ```swift
/// final class LiveLight: DecoderUpdatable {               // Sendable: its state is behind a Mutex
///     let objectID: ObjectID
///     private let state: Mutex<Bool>          // guards the mutable state: decodes may run on any thread
///     var isOn: Bool { self.state.withLock { $0 } }
///
///     init(from decoder: any Decoder) throws {
///         self.objectID = try Self.decodingID(in: decoder)
///         self.state = Mutex(try decoder.decodeProperty("isOn"))
///     }
///     func update(from decoder: any Decoder) throws {
///         let isOn: Bool = try decoder.decodeProperty("isOn")
///         self.state.withLock { $0 = isOn }
///     }
/// }
///
/// var family = ObjectFamily()
/// family.register(LiveLight.self)
/// let map = ObjectIdentityMap()
/// let decoder = CoatyJSONDecoder(family: family, options: .init(identityTracking: .across(map)))
/// let light = try decoder.decode(LiveLight.self, from: firstMessage)
/// let same = try decoder.decode(LiveLight.self, from: laterMessage)   // light === same, updated
/// ```
///
/// - Important: ``update(from:)`` runs on the decoding thread, while others may use the instance:
///   guard its mutable state (a `Mutex`), as the example does.
public protocol DecoderUpdatable: AnyObject, Decodable, Sendable {
    /// The id of the instance that the JSON in `decoder` describes.
    ///
    /// The default reads the JSON object's `objectId` member, which must be a non-empty string.
    ///
    /// - Throws: `DecodingError` if the id is missing or invalid.
    static func decodingID(in decoder: any Decoder) throws -> ObjectID

    /// Applies the fresh JSON in `decoder` to this instance.
    ///
    /// - Throws: Any error, which fails the decode like a decoding error; the instance should then be
    ///   left as it was.
    func update(from decoder: any Decoder) throws
}

extension DecoderUpdatable {
    /// Reads the `objectId` member of the JSON object in `decoder`.
    ///
    /// - Throws: `DecodingError` if the value is not a JSON object or its `objectId` is missing, not a
    ///   string or empty.
    public static func decodingID(in decoder: any Decoder) throws -> ObjectID {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        return try container.decodeNonEmptyID(forKey: AnyCodingKey("objectId"))
    }
}

/// A store of an app's live instances that decodes update in place; pass it as the decode's
/// ``ObjectDecodingOptions/factoryContext``.
///
/// A decode of a registered ``DecoderUpdatable`` type asks the store for the instance with the JSON's
/// id before it asks the identity map. The store is not told about new instances: a factory registered
/// with the type receives the store as its context and can add them.
public protocol UpdatableInstanceStore: Sendable {
    /// The live instance of `type` with `objectID`, if the store has one.
    func instance<T: DecoderUpdatable>(of type: T.Type, for objectID: ObjectID) -> T?
}

/// The key of a live ``DecoderUpdatable`` instance: its type and its id.
struct UpdatableInstanceKey: Hashable {
    let type: ObjectIdentifier
    let objectID: ObjectID

    init<T: DecoderUpdatable>(_ type: T.Type, _ objectID: ObjectID) {
        self.type = ObjectIdentifier(type)
        self.objectID = objectID
    }
}

extension ObjectFamily {
    /// How a type that is not a Coaty object decodes: a factory, or the lookup of ``DecoderUpdatable``.
    struct ValueEntry: Sendable {
        let decode: @Sendable (_ decoder: any Decoder, _ options: ObjectDecodingOptions) throws -> Any

        init(_ decode: @escaping @Sendable (_ decoder: any Decoder, _ options: ObjectDecodingOptions) throws -> Any) {
            self.decode = decode
        }
    }

    /// Decodes a `T` from any decoder as ``CoatyJSONDecoder`` decodes one: a ``CoatyObject`` through
    /// ``decodeObject(from:)`` (so it keeps the class the family chooses), an array of them through
    /// ``decodeObjects(from:)`` (with the element-failure policy), a type with a factory or a
    /// registered ``DecoderUpdatable`` through its entry, anything else with `T.init(from:)`.
    ///
    /// Use it in `init(from:)` code that must work under other decoders too, for example Foundation's
    /// `JSONDecoder` with ``ObjectDecodingOptions/userInfo(family:)``.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - decoder: A decoder positioned at the value.
    /// - Throws: `DecodingError` naming the field and the reason, or what a factory or update throws.
    public func decodeValue<T: Decodable>(_ type: T.Type, from decoder: any Decoder) throws -> T {
        if T.self is CoatyObject.Type {
            let object = try self.decodeObject(from: decoder)
            guard let result = object as? T else {
                throw CoatyJSONDecoder.mismatch(object, expected: T.self, codingPath: decoder.codingPath)
            }
            return result
        }
        if let arrayType = T.self as? any ObjectArray.Type {
            // `T` is an array of Coaty objects.
            return try arrayType.decodeObjects(with: self, from: decoder) as! T
        }
        guard let entry = self.valueEntries[ObjectIdentifier(T.self)] else { return try T(from: decoder) }
        // The entry was registered for `T`, so it returns a `T`.
        return try entry.decode(decoder, ObjectDecodingOptions.current(in: decoder)) as! T
    }

    /// Finds the live instance the JSON describes and updates it, or makes a new one and remembers it.
    static func decodeUpdatable<T: DecoderUpdatable>(
        _ type: T.Type,
        from decoder: any Decoder,
        options: ObjectDecodingOptions,
        factory: (@Sendable (any Decoder, (any Sendable)?) throws -> T)?
    ) throws -> T {
        let objectID = try T.decodingID(in: decoder)
        let scope = options.identityScope
        let existing =
            scope?.instance(of: T.self, for: objectID, sharedMap: false)
            ?? (options.factoryContext as? any UpdatableInstanceStore)?.instance(of: T.self, for: objectID)
            ?? scope?.instance(of: T.self, for: objectID, sharedMap: true)
        if let existing {
            try existing.update(from: decoder)
            scope?.remember(existing, for: objectID)
            return existing
        }
        let created = try factory?(decoder, options.factoryContext) ?? T(from: decoder)
        scope?.remember(created, for: objectID)
        return created
    }
}

/// Arrays of Coaty objects, which ``ObjectFamily/decodeValue(_:from:)`` decodes element by element through
/// the family.
protocol ObjectArray {
    static func decodeObjects(with family: ObjectFamily, from decoder: any Decoder) throws -> Self
}

extension Array: ObjectArray where Element: CoatyObject {
    static func decodeObjects(with family: ObjectFamily, from decoder: any Decoder) throws -> [Element] {
        try family.decodeObjects(Element.self, from: decoder)
    }
}
