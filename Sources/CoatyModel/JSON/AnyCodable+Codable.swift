#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension AnyCodable: Codable {
    /// Decodes any JSON value.
    ///
    /// With ``CoatyJSONDecoder`` the value is taken from the parsed tree directly. With other decoders
    /// the kinds are tried in order (`null`, string, integer, floating point, boolean, array, object),
    /// which throws and catches internally for every kind tried before the matching one; a number is
    /// read as ``int(_:)`` when `Int` takes it (so `1.0`, as our parser reads it too), and an integral
    /// number above `Int.max` again as `UInt64`, exactly.
    ///
    /// - Throws: `DecodingError.typeMismatch` if the value is none of the JSON kinds.
    public init(from decoder: any Decoder) throws {
        if let decoder = decoder as? JSONValueDecoder {
            self = decoder.value
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = Self.attempt(String.self, container) {
            self = .string(value)
        } else if let value = Self.attempt(Int.self, container) {
            self = .int(value)
        } else if let value = Self.attempt(Double.self, container) {
            // Above `Int.max`, an integral value is read again as `UInt64`, exactly, as our parser
            // reads it (a `Double` keeps only 53 bits: `UInt64.max` reads as 2^64).
            if value >= 0x1p63, value <= 0x1p64, value.rounded(.towardZero) == value,
                let exact = Self.attempt(UInt64.self, container)
            {
                self = .uint(exact)
            } else {
                self = .double(value)
            }
        } else if let value = Self.attempt(Bool.self, container) {
            self = .bool(value)
        } else if let value = Self.attempt([AnyCodable].self, container) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: AnyCodable].self))
        }
    }

    private static func attempt<T: Decodable>(_ type: T.Type, _ container: any SingleValueDecodingContainer) -> T? {
        do {
            return try container.decode(type)
        } catch {
            DecodingDiagnostics.note()
            return nil
        }
    }

    /// Encodes the value as the JSON value of the same kind.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .uint(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension AnyCodable {
    /// Parses UTF-8 JSON text into a value.
    ///
    /// - Parameters:
    ///   - json: The JSON text, for example an MQTT payload.
    ///   - maximumDepth: The deepest nesting of arrays and objects accepted. Defaults to 512, which is
    ///     also the most it accepts.
    /// - Throws: `DecodingError.dataCorrupted` naming the byte offset and the reason when the text is not
    ///   valid JSON, nests too deeply, has a number beyond `Double`'s range (such as `1e400`), an object
    ///   with two member names that differ only in Unicode normalization (which a Swift dictionary would
    ///   merge), or a string with more than 30 combining marks in a row (Unicode's stream-safe limit,
    ///   which keeps hashing and comparing strings linear).
    public init(json: some Collection<UInt8>, maximumDepth: Int = 512) throws {
        self = try JSONParser.parse(json, maximumDepth: maximumDepth)
    }

    /// Parses JSON text into a value.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the text is not valid JSON.
    public init(json: String) throws {
        self = try JSONParser.parse(json.utf8)
    }

    /// Decodes this value as `type`, as if it had been read from JSON.
    ///
    /// Useful to turn `privateData`, Call parameters or a custom property into a typed value.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - userInfo: Decoder user info, for example ``ObjectDecodingOptions/userInfo(family:)`` to decode objects.
    /// - Throws: `DecodingError` with the coding path of the offending value.
    public func decode<T: Decodable>(
        _ type: T.Type,
        userInfo: [CodingUserInfoKey: any Sendable] = [:]
    ) throws -> T {
        try JSONValueDecoder(value: self, node: .root, context: DecodingUserInfo(userInfo)).unbox(type)
    }

    /// Encodes an `Encodable` value into its JSON value.
    ///
    /// - Throws: `EncodingError` if `value` cannot be encoded.
    public init(encoding value: some Encodable) throws {
        self = try CoatyJSONEncoder().encodeValue(value)
    }

    /// The compact JSON text of this value, as `JSON.stringify` writes it (slashes unescaped).
    public var jsonString: String {
        let bytes = (try? CoatyJSONEncoder().encodeBytes(self)) ?? Array("null".utf8)
        return String(decoding: bytes, as: UTF8.self)
    }
}
