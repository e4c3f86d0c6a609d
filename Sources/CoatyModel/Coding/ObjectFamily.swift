/// The set of ``CoatyObject`` classes and factories an agent decodes polymorphically, keyed by object type.
///
/// An app builds one family at bootstrap, registers each custom class once, and hands it to its
/// configuration. It is an immutable value once built: there is no global registry.
///
/// ```swift
/// var family: ObjectFamily = [Light.self, Switch.self]
/// family.register(objectType: "com.example.Lamp") { decoder, context in
///     try Lamp(from: decoder, store: context as? LampStore)
/// }
/// ```
///
/// ## Choosing the class
///
/// An object's `objectType` picks the entry. Without one, decoding falls back to the built-in classes:
/// the canonical core types (`coaty.Task` → ``CoatyTask``, …) and the SensorThings types, and then
/// the class of the object's `coreType`. So an object of an unknown type `com.example.Robot` with core
/// type `Task` decodes as a ``CoatyTask`` that keeps `objectType` and its extra fields in
/// ``CoatyObject/customProperties``, and encodes back unchanged. An unknown `coreType` is an error.
/// A built-in object type with another core type (`coaty.Task` with core type `CoatyObject`) decodes as
/// the class of that core type, as coaty-js validates by core type only; a class the app registered
/// must get its own core type.
///
/// ## Options
///
/// ``decodeObject(from:)`` and ``decodeObjects(from:)`` read ``ObjectDecodingOptions`` from the
/// decoder's user info: the element-failure policy for arrays, identity tracking, and the context for
/// factories. For the common case use ``CoatyJSONDecoder`` or `family.decode(_:from:options:)`.
public struct ObjectFamily: Sendable, ExpressibleByArrayLiteral {
    /// A function that builds an object from a decoder, given the per-decode factory context.
    ///
    /// - Parameters:
    ///   - decoder: The decoder positioned at the object's JSON.
    ///   - context: ``ObjectDecodingOptions/factoryContext`` of the current decode.
    public typealias Factory = @Sendable (_ decoder: any Decoder, _ context: (any Sendable)?) throws -> CoatyObject

    enum Entry: Sendable {
        case type(CoatyObject.Type)
        case factory(Factory)
    }

    /// The family's two tables in one immutable box: a family is copied for every decode (into the
    /// decoder and its user info), and a copy is then one retain rather than one per table.
    /// Registering, which an app does while it builds its family, makes a new box.
    private final class Tables: Sendable {
        let entries: [String: Entry]
        let valueEntries: [ObjectIdentifier: ValueEntry]

        init(entries: [String: Entry], valueEntries: [ObjectIdentifier: ValueEntry]) {
            self.entries = entries
            self.valueEntries = valueEntries
        }
    }

    private var tables: Tables

    private var entries: [String: Entry] { self.tables.entries }
    /// Entries for types that are not Coaty objects (factories, ``DecoderUpdatable`` types), by type.
    var valueEntries: [ObjectIdentifier: ValueEntry] { self.tables.valueEntries }

    /// Creates a family of the built-in types and `types`.
    ///
    /// - Parameter types: Classes to register under their class property `objectType`.
    public init(_ types: [CoatyObject.Type] = []) {
        self.tables = Tables(entries: Self.builtInEntries, valueEntries: [:])
        for type in types { self.register(type) }
    }

    /// Replaces the tables with `body`'s changes to them.
    private mutating func change(
        _ body: (inout [String: Entry], inout [ObjectIdentifier: ValueEntry]) -> Void
    ) {
        var entries = self.tables.entries
        var valueEntries = self.tables.valueEntries
        body(&entries, &valueEntries)
        self.tables = Tables(entries: entries, valueEntries: valueEntries)
    }

    /// Creates a family of the built-in types and the listed classes.
    public init(arrayLiteral elements: CoatyObject.Type...) {
        self.init(elements)
    }

    /// Registers `type` under its class property `objectType`, replacing an earlier registration.
    public mutating func register(_ type: CoatyObject.Type) {
        self.change { entries, _ in entries[type.objectType] = .type(type) }
    }

    /// Registers a decoding factory for `objectType`, replacing an earlier registration.
    ///
    /// Use a factory for objects that need context to be built (for example a store they must be inserted
    /// into), or whose construction differs from `init(from:)`. The context is supplied per decode
    /// through ``ObjectDecodingOptions/factoryContext``, never through globals.
    ///
    /// - Parameters:
    ///   - objectType: The object type the factory decodes.
    ///   - factory: Builds the object; errors it throws fail (or skip) the object like any decoding error.
    public mutating func register(objectType: String, factory: @escaping Factory) {
        self.change { entries, _ in entries[objectType] = .factory(factory) }
    }

    /// Registers a decoding factory for `type`, replacing an earlier registration.
    ///
    /// Whenever ``CoatyJSONDecoder`` decodes a `T` (at the top, as a property, as an array element), it
    /// calls `factory` instead of `T.init(from:)`, handing it the decoder and the decode's
    /// ``ObjectDecodingOptions/factoryContext``; under another decoder, ``decodeValue(_:from:)`` does the
    /// same. For a ``CoatyObject`` class, this registers the factory under the class's object type, as
    /// ``register(objectType:factory:)`` does.
    ///
    /// - Important: Inside `factory`, build the value with `T(from: decoder)`, not by decoding a `T` from
    ///   the decoder again, which would call the factory again.
    ///
    /// - Parameters:
    ///   - type: The type the factory makes.
    ///   - factory: Builds the value; errors it throws fail the decode (or skip the array element) like any
    ///     decoding error.
    public mutating func register<T: Decodable & SendableMetatype>(
        _ type: T.Type,
        factory: @escaping @Sendable (_ decoder: any Decoder, _ context: (any Sendable)?) throws -> T
    ) {
        if let objectClass = T.self as? CoatyObject.Type {
            self.register(objectType: objectClass.objectType) { decoder, context in
                // `T` is a `CoatyObject` class here.
                try factory(decoder, context) as! CoatyObject
            }
            return
        }
        let entry = ValueEntry { decoder, options in try factory(decoder, options.factoryContext) }
        self.change { _, valueEntries in valueEntries[ObjectIdentifier(T.self)] = entry }
    }

    /// Registers a ``DecoderUpdatable`` type, so that decoding one updates the live instance with its
    /// id in place instead of making a new one; replaces an earlier registration.
    ///
    /// The decode looks the instance up by ``DecoderUpdatable/decodingID(in:)``: among the instances of
    /// the current decode, in the ``ObjectDecodingOptions/factoryContext`` when it is an
    /// ``UpdatableInstanceStore``, and in the ``ObjectIdentityMap`` of
    /// ``ObjectDecodingOptions/IdentityTracking/across(_:)``. It calls ``DecoderUpdatable/update(from:)``
    /// on the instance it finds and returns that instance; otherwise it makes a new one with `factory`
    /// (or `T.init(from:)`) and remembers it in the decode and the identity map.
    ///
    /// - Parameter type: The updatable type; new instances are made with `T.init(from:)`.
    public mutating func register<T: DecoderUpdatable>(_ type: T.Type) {
        let entry = ValueEntry { decoder, options in
            try Self.decodeUpdatable(T.self, from: decoder, options: options, factory: nil)
        }
        self.change { _, valueEntries in valueEntries[ObjectIdentifier(T.self)] = entry }
    }

    /// Registers a ``DecoderUpdatable`` type with a factory that makes its new instances (for example to
    /// add them to the app's store, the decode's ``ObjectDecodingOptions/factoryContext``); see
    /// `register(_:)` for `DecoderUpdatable` types.
    ///
    /// - Parameters:
    ///   - type: The updatable type.
    ///   - factory: Makes a new instance when there is none to update. Build it with `T(from: decoder)`.
    public mutating func register<T: DecoderUpdatable>(
        _ type: T.Type,
        factory: @escaping @Sendable (_ decoder: any Decoder, _ context: (any Sendable)?) throws -> T
    ) {
        let entry = ValueEntry { decoder, options in
            try Self.decodeUpdatable(T.self, from: decoder, options: options, factory: factory)
        }
        self.change { _, valueEntries in valueEntries[ObjectIdentifier(T.self)] = entry }
    }

    /// The class registered for `objectType`, if it was registered as a class.
    public func registeredClass(for objectType: String) -> CoatyObject.Type? {
        if case .type(let type) = self.entries[objectType] { return type }
        return nil
    }

    /// Whether `objectType` has a class or factory of its own (otherwise it decodes by core type).
    public func isRegistered(_ objectType: String) -> Bool {
        self.entries[objectType] != nil
    }

    /// The family a decoder carries in its user info, or the built-in family.
    ///
    /// - Parameter decoder: A decoder, for example the one passed to an event's `init(from:)`.
    /// - Returns: `decoder.userInfo[.objectFamily]`, or a family of the built-in types only.
    public static func current(in decoder: any Decoder) -> ObjectFamily {
        // Our own decoder keeps it outside the dictionary, which it makes only when asked for.
        if let decoder = decoder as? JSONValueDecoder { return decoder.context.family ?? Self.builtIn }
        return decoder.userInfo[.objectFamily] as? ObjectFamily ?? Self.builtIn
    }

    /// A family of the built-in types only.
    static let builtIn = ObjectFamily()

    /// The class that decodes objects of `coreType` when their object type is unknown.
    public static func fallbackClass(for coreType: CoreType) -> CoatyObject.Type {
        switch coreType {
        case .coatyObject: return CoatyObject.self
        case .user: return User.self
        case .annotation: return Annotation.self
        case .task: return CoatyTask.self
        case .ioContext: return IOContext.self
        case .ioNode: return IONode.self
        case .ioSource: return IOSource.self
        case .ioActor: return IOActor.self
        case .identity: return Identity.self
        case .log: return Log.self
        case .location: return Location.self
        case .snapshot: return Snapshot.self
        }
    }

    private static let builtInEntries: [String: Entry] = {
        var entries: [String: Entry] = [:]
        for coreType in CoreType.allCases {
            entries[coreType.objectType] = .type(fallbackClass(for: coreType))
        }
        for type: CoatyObject.Type in [Thing.self, Sensor.self, SensorObservation.self, FeatureOfInterest.self] {
            entries[type.objectType] = .type(type)
        }
        return entries
    }()

    /// The class ``decodeObject(from:)`` makes for an object of `objectType` and `coreType`: `nil` when a
    /// factory decides, or when the combination is an error.
    func chosenClass(objectType: String, coreType: CoreType) -> CoatyObject.Type? {
        switch self.entries[objectType] {
        case .type(let type):
            if type.coreType == coreType { return type }
            return Self.isBuiltIn(type, for: objectType) ? Self.fallbackClass(for: coreType) : nil
        case .factory:
            return nil
        case nil:
            return Self.fallbackClass(for: coreType)
        }
    }

    /// Whether `type` is the built-in class of `objectType` rather than one the app registered.
    private static func isBuiltIn(_ type: CoatyObject.Type, for objectType: String) -> Bool {
        guard case .type(let builtIn)? = Self.builtInEntries[objectType] else { return false }
        return ObjectIdentifier(builtIn) == ObjectIdentifier(type)
    }

    enum DiscriminatorKeys: String, CodingKey {
        case objectType
        case coreType
        case reference = "$ref"
    }

    /// Decodes one object, choosing its class from the `objectType` field and falling back to the class of
    /// its `coreType`.
    ///
    /// Honours the ``ObjectDecodingOptions`` in `decoder.userInfo`: with identity tracking, an object
    /// whose id was already decoded returns the earlier instance.
    ///
    /// - Parameter decoder: A decoder positioned at the object's JSON.
    /// - Returns: An instance of the registered class, the built-in class, or the core type's class.
    /// - Throws: `DecodingError` whose coding path names the field, with the reason in its description:
    ///   `objectType`/`coreType` missing or not a string, an unknown core type, a core type other than that
    ///   of the app-registered class, or any validation error of the chosen class or factory.
    public func decodeObject(from decoder: any Decoder) throws -> CoatyObject {
        let options = ObjectDecodingOptions.current(in: decoder)
        if let graph = options.graph {
            return try graph.decodeReference(from: decoder, family: self, options: options)
        }
        let object = try self.decodeNewObject(from: decoder, options: options)
        return options.identityScope?.canonical(object) ?? object
    }

    /// Decodes an object without identity tracking or graph references.
    func decodeNewObject(from decoder: any Decoder, options: ObjectDecodingOptions) throws -> CoatyObject {
        // Fast path for the parsed tree: read the discriminators without making a container.
        if let tree = decoder as? JSONValueDecoder, case .object(let members) = tree.value,
            case .string(let objectType)? = members["objectType"], case .string(let coreType)? = members["coreType"]
        {
            // Marked, so that the class's `init(from:)` knows it was chosen here.
            let entry = tree.asObjectEntry
            switch self.entries[objectType] {
            case .type(let type) where coreType == type.coreType.rawValue:
                return try type.init(from: entry)
            case .factory(let factory):
                return try factory(entry, options.factoryContext)
            case nil:
                if let coreType = CoreType(rawValue: coreType) {
                    return try Self.fallbackClass(for: coreType).init(from: entry)
                }
            default:
                break  // a mismatch: the general path below reports it
            }
        }
        let decoder = ChosenClassDecoder.marking(decoder)
        let container = try decoder.container(keyedBy: DiscriminatorKeys.self)
        let objectType = try container.decode(String.self, forKey: .objectType)
        switch self.entries[objectType] {
        case .type(let type):
            // Check the core type before the class validates its own fields, so a mismatch is reported as such.
            let coreTypeName = try container.decode(String.self, forKey: .coreType)
            if coreTypeName != type.coreType.rawValue, Self.isBuiltIn(type, for: objectType),
                let coreType = CoreType(rawValue: coreTypeName)
            {
                // coaty-js validates by core type only, so `coaty.Task` with core type `CoatyObject` is valid.
                return try Self.fallbackClass(for: coreType).init(from: decoder)
            }
            guard coreTypeName == type.coreType.rawValue else {
                throw DecodingError.dataCorruptedError(
                    forKey: .coreType,
                    in: container,
                    debugDescription: CoreType(rawValue: coreTypeName) == nil
                        ? "unknown core type '\(coreTypeName)' (expected one of the 12 Coaty core types)"
                        : "core type '\(coreTypeName)' does not match object type '\(objectType)' "
                            + "(\(type.coreType.rawValue))"
                )
            }
            return try type.init(from: decoder)
        case .factory(let factory):
            return try factory(decoder, options.factoryContext)
        case nil:
            let coreTypeName = try container.decode(String.self, forKey: .coreType)
            guard let coreType = CoreType(rawValue: coreTypeName) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .coreType,
                    in: container,
                    debugDescription: "unknown core type '\(coreTypeName)' (expected one of the 12 Coaty core types)"
                )
            }
            return try Self.fallbackClass(for: coreType).init(from: decoder)
        }
    }

    /// Decodes a JSON array of objects element by element, each by its own discriminator.
    ///
    /// Each element is decoded at its own index, so a bad element never shifts or corrupts the others.
    /// What happens to a bad element follows ``ObjectDecodingOptions/elementFailurePolicy``.
    ///
    /// - Parameter decoder: A decoder positioned at the JSON array.
    /// - Returns: The decoded objects in array order (without skipped elements).
    /// - Throws: `DecodingError` if the value is not an array, or, under
    ///   ``ObjectDecodingOptions/ElementFailurePolicy/fail``, the first element's error; its coding path
    ///   ends in the element's index.
    public func decodeObjects(from decoder: any Decoder) throws -> [CoatyObject] {
        try self.decodeObjects(CoatyObject.self, from: decoder)
    }

    /// Decodes a JSON array of objects that must each be a `T`; an element of another class counts as a
    /// bad element at its JSON index.
    func decodeObjects<T: CoatyObject>(_ type: T.Type, from decoder: any Decoder) throws -> [T] {
        let skipReport = ObjectDecodingOptions.current(in: decoder).elementFailurePolicy.skipReport
        var container = try decoder.unkeyedContainer()
        var objects: [T] = []
        objects.reserveCapacity(container.count ?? 0)
        while !container.isAtEnd {
            let index = container.currentIndex
            let element = try container.superDecoder()
            do {
                let object = try self.decodeObject(from: element)
                objects.append(try CoatyJSONDecoder.cast(object, to: type, codingPath: element.codingPath))
            } catch {
                guard let skipReport else { throw error }
                skipReport(.init(index: index, path: CodingPathNode.render(element.codingPath), error: error))
            }
        }
        return objects
    }
}

extension CodingUserInfoKey {
    /// The key under which decoders find the ``ObjectFamily`` to use.
    public static let objectFamily = CodingUserInfoKey(rawValue: "coaty.objectFamily")!
}
