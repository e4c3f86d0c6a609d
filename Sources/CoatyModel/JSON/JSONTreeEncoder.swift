#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The `Encoder` behind ``CoatyJSONEncoder``: builds an ``EncodedJSON`` tree that ``JSONWriter``
/// writes out.
///
/// It writes what Foundation's `JSONEncoder` (with `.withoutEscapingSlashes` and default strategies)
/// writes, value for value: `Data` as Base64, `Date` as its `Codable` form (seconds since 2001),
/// `URL` as its absolute string, `Decimal` as a number, non-finite numbers refused with
/// `EncodingError.invalidValue`, a value that encodes nothing as `{}`. Two things are faster: an
/// ``AnyCodable`` (custom properties, parameters, results) becomes part of the tree directly instead of
/// going through containers, and keys keep the order they were written in instead of a dictionary's.
final class JSONTreeEncoder: Encoder {
    /// Where this encoder sits: its parent and its key or index there. The coding path is built from
    /// this chain only when someone asks for it (usually to report an error), so nesting allocates
    /// nothing but the encoder itself.
    private let parent: JSONTreeEncoder?
    private let component: PathComponent?
    /// The coding path above the root of the chain: empty, except for a deferred encoder (see
    /// ``deferredChild(_:)``), which holds its path instead of its parent.
    private let basePath: [any CodingKey]
    /// What the encoders of one encoding share, handed to each encoder made from this one. An
    /// encoding without user info makes it only when it first encodes a Coaty object, so that most
    /// payloads allocate none: the objects in progress are those whose `encode(to:)` is running, and
    /// every encoder nested in one is made from its encoder after it began. Not checked for exclusive
    /// access at run time, for the reason `EncodedObject` gives.
    @exclusivity(unchecked) private var session: EncodingSession?
    /// How many `encode(to:)` calls this encoder is nested in; see ``maximumDepth``.
    let depth: Int
    var userInfo: [CodingUserInfoKey: Any] { self.session?.userInfo ?? [:] }

    /// The deepest nesting of values encoded, which is also the deepest JSON our decoders accept. Only a
    /// reference cycle reaches it in practice: a value that contains itself would recurse until the
    /// stack overflows.
    static let maximumDepth = JSONParser.defaultMaximumDepth
    /// What has been encoded so far: the single value, or the container all containers write into.
    /// Not checked for exclusive access at run time, for the reason `EncodedObject` gives.
    @exclusivity(unchecked) private(set) var result: EncodedJSON = .object(EncodedObject())
    @exclusivity(unchecked) private var hasValue = false

    enum PathComponent {
        case key(String)
        case index(Int)

        var codingKey: any CodingKey {
            switch self {
            case .key(let key): AnyCodingKey(key)
            case .index(let index): AnyCodingKey(index: index)
            }
        }
    }

    var codingPath: [any CodingKey] {
        var path: [any CodingKey] = []
        var encoder = self
        while true {
            if let component = encoder.component { path.append(component.codingKey) }
            guard let parent = encoder.parent else { break }
            encoder = parent
        }
        return encoder.basePath + path.reversed()
    }

    init(
        parent: JSONTreeEncoder? = nil,
        component: PathComponent? = nil,
        basePath: [any CodingKey] = [],
        session: EncodingSession?,
        depth: Int = 0
    ) {
        self.parent = parent
        self.component = component
        self.basePath = basePath
        self.session = session
        self.depth = depth
    }

    /// An encoder for the value at `component` of this encoder's container.
    func child(_ component: PathComponent) -> JSONTreeEncoder {
        JSONTreeEncoder(parent: self, component: component, session: self.session, depth: self.depth + 1)
    }

    /// An encoder for the value at `component` that is written after the call returns
    /// (`superEncoder()`), so the tree keeps the encoder itself until it is read.
    ///
    /// It holds its coding path, not its parent: the parent's tree holds it, and a reference back would
    /// make a cycle that leaked both encoders and all they encoded. Every event that carries an object
    /// encodes it this way, and each leaked about 0.4–1.6 KB.
    func deferredChild(_ component: PathComponent) -> JSONTreeEncoder {
        JSONTreeEncoder(basePath: self.path(appending: component), session: self.session, depth: self.depth + 1)
    }

    /// The coding path of the value at `component` of this encoder's container.
    func path(appending component: PathComponent) -> [any CodingKey] {
        self.codingPath + [component.codingKey]
    }

    // MARK: Entry points

    /// Encodes a value and returns its tree.
    static func encode<T: Encodable>(_ value: T, userInfo: [CodingUserInfoKey: Any]) throws -> EncodedJSON {
        let encoder = JSONTreeEncoder(session: userInfo.isEmpty ? nil : EncodingSession(userInfo: userInfo))
        if let direct = try encoder.directValue(value, path: []) { return direct }
        // A metatype check, not `value as? CoatyObject`: most values encoded here are payload structs,
        // and a failed cast of a struct to a class searches the runtime's conformance tables.
        if T.self is CoatyObject.Type {
            // The root of an object graph's table entry is written here, never as a reference.
            try encoder.encodeObjectInline(value as! CoatyObject)
        } else {
            try value.encode(to: encoder)
        }
        return encoder.result
    }

    /// The tree of `value` encoded at `component` of this encoder's container.
    func box<T: Encodable>(_ value: T, at component: PathComponent) throws -> EncodedJSON {
        if let direct = try self.directValue(value, path: self.path(appending: component)) { return direct }
        let encoder = self.child(component)
        try encoder.encodeNested(value)
        return encoder.result
    }

    /// The tree of `value` encoded in place of this encoder's own value (a single-value container).
    func boxInPlace<T: Encodable>(_ value: T) throws -> EncodedJSON {
        if let direct = try self.directValue(value, path: self.codingPath) { return direct }
        let encoder = JSONTreeEncoder(
            parent: self.parent,
            component: self.component,
            basePath: self.basePath,
            session: self.session,
            depth: self.depth + 1
        )
        try encoder.encodeNested(value)
        return encoder.result
    }

    /// Encodes a value nested in another into this (fresh) encoder: inside an object graph, a Coaty
    /// object as a reference to its table entry, however it is reached (keyed, unkeyed or single-value
    /// container), since the graph decoder follows a reference from any of them.
    private func encodeNested<T: Encodable>(_ value: T) throws {
        try self.checkDepth()
        if let graph = self.session?.graph, let object = value as? CoatyObject {
            try graph.encodeReference(to: object, strong: true, encoder: self)
            return
        }
        try value.encode(to: self)
    }

    /// Encodes a Coaty object nested in another into this (fresh) encoder, as
    /// `KeyedEncodingContainer.encodeObject(_:forKey:)` does: a reference inside an object graph,
    /// otherwise the object itself, refusing one that contains itself.
    func encodeObject(_ object: CoatyObject) throws {
        try self.checkDepth()
        if let graph = self.session?.graph {
            try graph.encodeReference(to: object, strong: true, encoder: self)
        } else {
            try self.encodeObjectInline(object)
        }
    }

    /// Encodes `object` itself into this encoder, refusing it if it is being encoded already: an object
    /// that contains itself through strong references would be written forever.
    private func encodeObjectInline(_ object: CoatyObject) throws {
        let session = self.session ?? EncodingSession(userInfo: [:])
        self.session = session
        if let start = session.objectsInProgress.firstIndex(where: { $0 === object }) {
            let cycle = Array(session.objectsInProgress[start...]) + [object]
            let names = cycle.map { "'\($0.objectID)' (\($0.objectType))" }
            throw EncodingError.invalidValue(
                object,
                EncodingError.Context(
                    codingPath: self.codingPath,
                    debugDescription: "strong reference cycle " + names.joined(separator: " → ")
                        + " cannot be written as JSON; make one of these references an ObjectLink, "
                        + "or store the graph with ObjectGraphEncoder"
                )
            )
        }
        session.objectsInProgress.append(object)
        defer { session.objectsInProgress.removeLast() }
        try object.encode(to: self)
    }

    /// Throws once values nest deeper than ``maximumDepth``, which only a reference cycle does in
    /// practice, instead of recursing until the stack overflows.
    private func checkDepth() throws {
        guard self.depth >= Self.maximumDepth else { return }
        throw EncodingError.invalidValue(
            "",
            EncodingError.Context(
                codingPath: self.codingPath,
                debugDescription: "values nest deeper than \(Self.maximumDepth) levels, which no decoder here "
                    + "accepts; a value that contains itself (a reference cycle) does that"
            )
        )
    }

    /// Values written without an encoder of their own: the types `JSONEncoder` special-cases, and
    /// ``AnyCodable``.
    private func directValue<T: Encodable>(
        _ value: T,
        path: @autoclosure () -> [any CodingKey]
    ) throws -> EncodedJSON? {
        // Metatype comparisons, not `as?` casts: most values are none of these, and a failed dynamic
        // cast per candidate type would cost more than the encoding.
        if T.self == AnyCodable.self { return try Self.tree(of: value as! AnyCodable, path: path()) }
        if T.self == String.self { return .string(value as! String) }
        if T.self == Int.self { return .integer(Int64(value as! Int)) }
        if T.self == Double.self { return try Self.number(value as! Double, path: path()) }
        if T.self == Bool.self { return .bool(value as! Bool) }
        if T.self == JSONKnownTypes.anyCodableDictionary {
            return try Self.tree(of: .object(value as! [String: AnyCodable]), path: path())
        }
        if T.self == Data.self { return .string((value as! Data).base64EncodedString()) }
        if T.self == URL.self { return .string((value as! URL).absoluteString) }
        if T.self == Decimal.self {
            let decimal = value as! Decimal
            guard !decimal.isNaN else {
                throw EncodingError.invalidValue(
                    decimal,
                    EncodingError.Context(codingPath: path(), debugDescription: "Unable to encode NaN in JSON.")
                )
            }
            return .number(decimal.description)
        }
        return nil
    }

    static func number(_ value: Double, path: @autoclosure () -> [any CodingKey]) throws -> EncodedJSON {
        guard value.isFinite else { throw Self.nonFinite(value, path: path()) }
        return .double(value)
    }

    static func number(_ value: Float, path: @autoclosure () -> [any CodingKey]) throws -> EncodedJSON {
        guard value.isFinite else { throw Self.nonFinite(value, path: path()) }
        return .float(value)
    }

    private static func nonFinite(_ value: some BinaryFloatingPoint, path: [any CodingKey]) -> EncodingError {
        EncodingError.invalidValue(
            value,
            EncodingError.Context(codingPath: path, debugDescription: "Unable to encode \(value) directly in JSON.")
        )
    }

    // MARK: Encoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: EncodedObject
        if case .object(let existing) = self.result {
            object = existing
        } else {
            // A single value was encoded before: like JSONEncoder, the container replaces it.
            object = EncodedObject()
            self.result = .object(object)
        }
        self.hasValue = true
        return KeyedEncodingContainer(TreeKeyedContainer(encoder: self, object: object))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: EncodedArray
        if self.hasValue, case .array(let existing) = self.result {
            array = existing
        } else {
            array = EncodedArray()
            self.result = .array(array)
        }
        self.hasValue = true
        return TreeUnkeyedContainer(encoder: self, array: array)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        TreeSingleValueContainer(encoder: self)
    }

    fileprivate func setSingleValue(_ value: EncodedJSON) {
        self.result = value
        self.hasValue = true
    }

}

/// A keyed container writing into an ``EncodedObject``.
private struct TreeKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: JSONTreeEncoder
    let object: EncodedObject

    var codingPath: [any CodingKey] { self.encoder.codingPath }

    private func path(_ key: Key) -> [any CodingKey] { self.encoder.path(appending: .key(key.stringValue)) }

    mutating func encodeNil(forKey key: Key) throws { self.object.set(.null, forKey: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        self.object.set(.bool(value), forKey: key.stringValue)
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        self.object.set(.string(value), forKey: key.stringValue)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        self.object.set(try JSONTreeEncoder.number(value, path: self.path(key)), forKey: key.stringValue)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        self.object.set(try JSONTreeEncoder.number(value, path: self.path(key)), forKey: key.stringValue)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws {
        self.object.set(.integer(Int64(value)), forKey: key.stringValue)
    }
    mutating func encode(_ value: Int8, forKey key: Key) throws {
        self.object.set(.integer(Int64(value)), forKey: key.stringValue)
    }
    mutating func encode(_ value: Int16, forKey key: Key) throws {
        self.object.set(.integer(Int64(value)), forKey: key.stringValue)
    }
    mutating func encode(_ value: Int32, forKey key: Key) throws {
        self.object.set(.integer(Int64(value)), forKey: key.stringValue)
    }
    mutating func encode(_ value: Int64, forKey key: Key) throws {
        self.object.set(.integer(value), forKey: key.stringValue)
    }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        self.object.set(.unsigned(UInt64(value)), forKey: key.stringValue)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        self.object.set(.unsigned(UInt64(value)), forKey: key.stringValue)
    }
    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        self.object.set(.unsigned(UInt64(value)), forKey: key.stringValue)
    }
    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        self.object.set(.unsigned(UInt64(value)), forKey: key.stringValue)
    }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        self.object.set(.unsigned(value), forKey: key.stringValue)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        self.object.set(try self.encoder.box(value, at: .key(key.stringValue)), forKey: key.stringValue)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedObject()
        self.object.set(.object(nested), forKey: key.stringValue)
        let encoder = self.encoder.child(.key(key.stringValue))
        return KeyedEncodingContainer(TreeKeyedContainer<NestedKey>(encoder: encoder, object: nested))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = EncodedArray()
        self.object.set(.array(nested), forKey: key.stringValue)
        let encoder = self.encoder.child(.key(key.stringValue))
        return TreeUnkeyedContainer(encoder: encoder, array: nested)
    }

    mutating func superEncoder() -> any Encoder {
        self.deferredEncoder(forKey: "super")
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        self.deferredEncoder(forKey: key.stringValue)
    }

    private func deferredEncoder(forKey key: String) -> any Encoder {
        let encoder = self.encoder.deferredChild(.key(key))
        self.object.set(.deferred(encoder), forKey: key)
        return encoder
    }
}

/// An unkeyed container appending to an ``EncodedArray``.
private struct TreeUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: JSONTreeEncoder
    let array: EncodedArray

    var codingPath: [any CodingKey] { self.encoder.codingPath }
    var count: Int { self.array.elements.count }

    private var next: JSONTreeEncoder.PathComponent { .index(self.array.elements.count) }
    private var path: [any CodingKey] { self.encoder.path(appending: self.next) }

    mutating func encodeNil() throws { self.array.elements.append(.null) }
    mutating func encode(_ value: Bool) throws { self.array.elements.append(.bool(value)) }
    mutating func encode(_ value: String) throws { self.array.elements.append(.string(value)) }
    mutating func encode(_ value: Double) throws {
        self.array.elements.append(try JSONTreeEncoder.number(value, path: self.path))
    }
    mutating func encode(_ value: Float) throws {
        self.array.elements.append(try JSONTreeEncoder.number(value, path: self.path))
    }
    mutating func encode(_ value: Int) throws { self.array.elements.append(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { self.array.elements.append(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { self.array.elements.append(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { self.array.elements.append(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { self.array.elements.append(.integer(value)) }
    mutating func encode(_ value: UInt) throws { self.array.elements.append(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { self.array.elements.append(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { self.array.elements.append(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { self.array.elements.append(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { self.array.elements.append(.unsigned(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        self.array.elements.append(try self.encoder.box(value, at: self.next))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        let nested = EncodedObject()
        let encoder = self.encoder.child(self.next)
        self.array.elements.append(.object(nested))
        return KeyedEncodingContainer(TreeKeyedContainer<NestedKey>(encoder: encoder, object: nested))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = EncodedArray()
        let encoder = self.encoder.child(self.next)
        self.array.elements.append(.array(nested))
        return TreeUnkeyedContainer(encoder: encoder, array: nested)
    }

    mutating func superEncoder() -> any Encoder {
        let encoder = self.encoder.deferredChild(self.next)
        self.array.elements.append(.deferred(encoder))
        return encoder
    }
}

/// A single-value container setting its encoder's value.
private struct TreeSingleValueContainer: SingleValueEncodingContainer {
    let encoder: JSONTreeEncoder

    var codingPath: [any CodingKey] { self.encoder.codingPath }

    mutating func encodeNil() throws { self.encoder.setSingleValue(.null) }
    mutating func encode(_ value: Bool) throws { self.encoder.setSingleValue(.bool(value)) }
    mutating func encode(_ value: String) throws { self.encoder.setSingleValue(.string(value)) }
    mutating func encode(_ value: Double) throws {
        self.encoder.setSingleValue(try JSONTreeEncoder.number(value, path: self.encoder.codingPath))
    }
    mutating func encode(_ value: Float) throws {
        self.encoder.setSingleValue(try JSONTreeEncoder.number(value, path: self.encoder.codingPath))
    }
    mutating func encode(_ value: Int) throws { self.encoder.setSingleValue(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { self.encoder.setSingleValue(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { self.encoder.setSingleValue(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { self.encoder.setSingleValue(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { self.encoder.setSingleValue(.integer(value)) }
    mutating func encode(_ value: UInt) throws { self.encoder.setSingleValue(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { self.encoder.setSingleValue(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { self.encoder.setSingleValue(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { self.encoder.setSingleValue(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { self.encoder.setSingleValue(.unsigned(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        self.encoder.setSingleValue(try self.encoder.boxInPlace(value))
    }
}
