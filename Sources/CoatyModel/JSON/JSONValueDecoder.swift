/// A `Decoder` over an already-parsed ``AnyCodable`` tree.
///
/// Unlike a general-purpose decoder, it can hand ``AnyCodable`` values out directly, so decoding
/// free-form JSON never tries and fails. Used by ``CoatyJSONDecoder`` and the object-graph decoder.
struct JSONValueDecoder: Decoder {
    let value: AnyCodable
    let node: CodingPathNode
    /// Shared by every decoder and container of one decode.
    let context: DecodingUserInfo
    /// Whether ``ObjectFamily`` chose the class this decoder is handed to (see ``ChosenClassDecoder``).
    var isObjectEntry = false

    /// This decoder, marked as handed by ``ObjectFamily`` to the class it chose.
    var asObjectEntry: JSONValueDecoder {
        var decoder = self
        decoder.isObjectEntry = true
        return decoder
    }

    var codingPath: [any CodingKey] { self.node.path }
    var userInfo: [CodingUserInfoKey: Any] { self.context.values }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = self.value else {
            throw self.typeMismatch([String: AnyCodable].self, at: self.node, expected: "a JSON object")
        }
        return KeyedDecodingContainer(KeyedContainer(members: members, node: self.node, context: self.context))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = self.value else {
            throw self.typeMismatch([AnyCodable].self, at: self.node, expected: "a JSON array")
        }
        return UnkeyedContainer(elements: elements, node: self.node, context: self.context)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(decoder: self)
    }

    func typeMismatch(_ type: Any.Type, at node: CodingPathNode, expected: String? = nil) -> DecodingError {
        DecodingDiagnostics.note()
        return DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: node.path,
                debugDescription: "expected \(expected ?? "\(type)") but found \(self.value.kindDescription)"
            )
        )
    }

    /// Unboxes a value of a standard type, or decodes it through `init(from:)`.
    ///
    /// A ``CoatyObject`` of any class is decoded through the decode's ``ObjectFamily``, so that
    /// synthesized `Codable` and generic code keep the subclass the family chooses (and honour identity
    /// tracking and graph references) instead of calling the static type's `init(from:)`; a type the
    /// family has a value entry for (a factory, or ``DecoderUpdatable``) goes through that entry.
    func unbox<T: Decodable>(_ type: T.Type) throws -> T {
        // `T` is `AnyCodable` itself here, so the cast cannot fail. A checked `as? T` made the
        // unspecialised code look up generic metadata at run time, for every value it unboxed.
        if T.self == AnyCodable.self { return unsafeBitCast(self.value, to: T.self) }
        // The two most common types that are not standard ones, taken without their `init(from:)`.
        if T.self == ObjectID.self { return unsafeBitCast(ObjectID(try self.unboxString()), to: T.self) }
        if T.self == JSONKnownTypes.anyCodableDictionary {
            guard case .object(let members) = self.value else {
                throw self.typeMismatch([String: AnyCodable].self, at: self.node, expected: "a JSON object")
            }
            return unsafeBitCast(members, to: T.self)
        }
        if T.self is CoatyObject.Type { return try self.unboxObject(T.self) }
        if let entry = self.context.valueEntry(for: T.self) {
            return try self.unbox(T.self, through: entry)
        }
        return try T(from: self)
    }

    // The two rare paths of `unbox(_:)` are functions of their own, never inlined into it: their
    // casts need the metadata of `T?`, which the unspecialised `unbox(_:)` would otherwise look up in
    // the runtime's cache on entry, for every value it unboxes.

    /// A ``CoatyObject`` of class `T`, decoded through the decode's ``ObjectFamily``.
    @inline(never)
    private func unboxObject<T: Decodable>(_ type: T.Type) throws -> T {
        let object = try ObjectFamily.current(in: self).decodeObject(from: self)
        guard let result = object as? T else {
            throw CoatyJSONDecoder.mismatch(object, expected: T.self, codingPath: self.codingPath)
        }
        return result
    }

    /// A value decoded by the family's value entry for `T`.
    @inline(never)
    private func unbox<T: Decodable>(_ type: T.Type, through entry: ObjectFamily.ValueEntry) throws -> T {
        let options = self.context.options ?? ObjectDecodingOptions()
        // The entry was registered for `T`, so it returns a `T`.
        return try entry.decode(self, options) as! T
    }

    func unboxBool() throws -> Bool {
        guard case .bool(let value) = self.value else { throw self.typeMismatch(Bool.self, at: self.node) }
        return value
    }

    func unboxString() throws -> String {
        guard case .string(let value) = self.value else { throw self.typeMismatch(String.self, at: self.node) }
        return value
    }

    func unboxDouble() throws -> Double {
        switch self.value {
        case .double(let value): return value
        case .int(let value): return Double(value)
        case .uint(let value): return Double(value)
        default: throw self.typeMismatch(Double.self, at: self.node)
        }
    }

    /// A JSON number narrowed to `Float`. One beyond `Float`'s range (`1e39`, which `Double` holds) is
    /// refused, as `JSONDecoder` refuses it: narrowing made it an infinity, which no encoder can write
    /// back (the parser refuses numbers beyond `Double`'s range for the same reason).
    func unboxFloat() throws -> Float {
        let value = Float(try self.unboxDouble())
        guard value.isFinite else {
            DecodingDiagnostics.note()
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: self.node.path,
                    debugDescription: "number \(self.value) does not fit in Float"
                )
            )
        }
        return value
    }

    func unboxInteger<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        switch self.value {
        case .int(let value):
            if let result = T(exactly: value) { return result }
        case .uint(let value):
            if let result = T(exactly: value) { return result }
        case .double(let value):
            // The parser reads every integer it can hold exactly as `int` or `uint`; a double beyond
            // 2^53 may be a literal it rounded (`-9223372036854775809`), so it is refused, as
            // `JSONDecoder` refuses such literals.
            if value.magnitude < 0x1p53, let result = T(exactly: value) { return result }
        default:
            throw self.typeMismatch(T.self, at: self.node)
        }
        DecodingDiagnostics.note()
        throw DecodingError.dataCorrupted(
            DecodingError.Context(
                codingPath: self.node.path,
                debugDescription: "number \(self.value) does not fit in \(T.self)"
            )
        )
    }
}

extension JSONValueDecoder {
    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let members: [String: AnyCodable]
        let node: CodingPathNode
        let context: DecodingUserInfo

        var codingPath: [any CodingKey] { self.node.path }
        var allKeys: [Key] { self.members.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { self.members[key.stringValue] != nil }

        private func decoder(for key: Key) throws -> JSONValueDecoder {
            guard let value = self.members[key.stringValue] else {
                DecodingDiagnostics.note()
                throw DecodingError.keyNotFound(
                    key,
                    DecodingError.Context(
                        codingPath: self.node.path,
                        debugDescription: "required key '\(key.stringValue)' is missing"
                    )
                )
            }
            return JSONValueDecoder(value: value, node: .key(key.stringValue, self.node), context: self.context)
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            guard let value = self.members[key.stringValue] else { return true }
            return value.isNull
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try self.decoder(for: key).unboxBool() }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try self.decoder(for: key).unboxString() }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try self.decoder(for: key).unboxDouble() }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try self.decoder(for: key).unboxFloat() }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try self.decoder(for: key).unboxInteger(type) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try self.decoder(for: key).unboxInteger(type) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
            try self.decoder(for: key).unboxInteger(type)
        }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
            try self.decoder(for: key).unboxInteger(type)
        }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            try self.decoder(for: key).unboxInteger(type)
        }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try self.decoder(for: key).unboxInteger(type) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
            try self.decoder(for: key).unboxInteger(type)
        }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
            try self.decoder(for: key).unboxInteger(type)
        }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
            try self.decoder(for: key).unboxInteger(type)
        }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
            try self.decoder(for: key).unboxInteger(type)
        }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try self.decoder(for: key).unbox(type)
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type,
            forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try self.decoder(for: key).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try self.decoder(for: key).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            JSONValueDecoder(
                value: self.members["super"] ?? .null,
                node: .key("super", self.node),
                context: self.context
            )
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            JSONValueDecoder(
                value: self.members[key.stringValue] ?? .null,
                node: .key(key.stringValue, self.node),
                context: self.context
            )
        }
    }

    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let elements: [AnyCodable]
        let node: CodingPathNode
        let context: DecodingUserInfo
        var currentIndex = 0

        init(elements: [AnyCodable], node: CodingPathNode, context: DecodingUserInfo) {
            self.elements = elements
            self.node = node
            self.context = context
        }

        var codingPath: [any CodingKey] { self.node.path }
        var count: Int? { self.elements.count }
        var isAtEnd: Bool { self.currentIndex >= self.elements.count }

        private mutating func next() throws -> JSONValueDecoder {
            guard !self.isAtEnd else {
                DecodingDiagnostics.note()
                throw DecodingError.valueNotFound(
                    Any.self,
                    DecodingError.Context(
                        codingPath: CodingPathNode.index(self.currentIndex, self.node).path,
                        debugDescription: "unkeyed container is at end"
                    )
                )
            }
            let decoder = JSONValueDecoder(
                value: self.elements[self.currentIndex],
                node: .index(self.currentIndex, self.node),
                context: self.context
            )
            self.currentIndex += 1
            return decoder
        }

        mutating func decodeNil() throws -> Bool {
            guard !self.isAtEnd, self.elements[self.currentIndex].isNull else { return false }
            self.currentIndex += 1
            return true
        }

        mutating func decode(_ type: Bool.Type) throws -> Bool { try self.next().unboxBool() }
        mutating func decode(_ type: String.Type) throws -> String { try self.next().unboxString() }
        mutating func decode(_ type: Double.Type) throws -> Double { try self.next().unboxDouble() }
        mutating func decode(_ type: Float.Type) throws -> Float { try self.next().unboxFloat() }
        mutating func decode(_ type: Int.Type) throws -> Int { try self.next().unboxInteger(type) }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { try self.next().unboxInteger(type) }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { try self.next().unboxInteger(type) }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { try self.next().unboxInteger(type) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { try self.next().unboxInteger(type) }
        mutating func decode(_ type: UInt.Type) throws -> UInt { try self.next().unboxInteger(type) }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try self.next().unboxInteger(type) }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try self.next().unboxInteger(type) }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try self.next().unboxInteger(type) }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try self.next().unboxInteger(type) }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try self.next().unbox(type) }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try self.next().container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            try self.next().unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder { try self.next() }
    }

    struct SingleValueContainer: SingleValueDecodingContainer {
        let decoder: JSONValueDecoder

        var codingPath: [any CodingKey] { self.decoder.codingPath }

        func decodeNil() -> Bool { self.decoder.value.isNull }
        func decode(_ type: Bool.Type) throws -> Bool { try self.decoder.unboxBool() }
        func decode(_ type: String.Type) throws -> String { try self.decoder.unboxString() }
        func decode(_ type: Double.Type) throws -> Double { try self.decoder.unboxDouble() }
        func decode(_ type: Float.Type) throws -> Float { try self.decoder.unboxFloat() }
        func decode(_ type: Int.Type) throws -> Int { try self.decoder.unboxInteger(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { try self.decoder.unboxInteger(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try self.decoder.unboxInteger(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try self.decoder.unboxInteger(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try self.decoder.unboxInteger(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try self.decoder.unboxInteger(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try self.decoder.unboxInteger(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try self.decoder.unboxInteger(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try self.decoder.unboxInteger(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try self.decoder.unboxInteger(type) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try self.decoder.unbox(type) }
    }
}

extension AnyCodable {
    /// A short name of the value's JSON kind, for error messages.
    var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .uint, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
