/// Decoding helpers that validate like coaty-js: optional fields may be absent but never `null`, and
/// strings that identify something must not be empty. Every error is a `DecodingError` whose coding path
/// ends in the field.
extension KeyedDecodingContainer {
    /// Decodes a value if its key is present; a present `null` is an error (coaty-js rejects it).
    func decodeStrictIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard self.contains(key) else { return nil }
        if try self.decodeNil(forKey: key) { throw self.invalid(key, "must be omitted when absent, not null") }
        return try self.decode(type, forKey: key)
    }

    /// Decodes a required non-empty string.
    func decodeNonEmptyString(forKey key: Key) throws -> String {
        let value = try self.decode(String.self, forKey: key)
        guard !value.isEmpty else { throw self.invalid(key, "must not be empty") }
        return value
    }

    /// Decodes an optional string that must be non-empty when present.
    func decodeNonEmptyStringIfPresent(forKey key: Key) throws -> String? {
        guard try self.decodeStrictIfPresent(String.self, forKey: key) != nil else { return nil }
        return try self.decodeNonEmptyString(forKey: key)
    }

    /// Decodes a required non-empty object id.
    func decodeNonEmptyID(forKey key: Key) throws -> ObjectID {
        ObjectID(try self.decodeNonEmptyString(forKey: key))
    }

    /// Decodes an optional object id that must be non-empty when present.
    func decodeNonEmptyIDIfPresent(forKey key: Key) throws -> ObjectID? {
        try self.decodeNonEmptyStringIfPresent(forKey: key).map { ObjectID($0) }
    }

    /// Decodes an optional array of non-empty strings (coaty-js `isStringArray`).
    func decodeStringArrayIfPresent(forKey key: Key) throws -> [String]? {
        guard let values = try self.decodeStrictIfPresent([String].self, forKey: key) else { return nil }
        if let index = values.firstIndex(where: \.isEmpty) {
            throw self.invalid(key, "element \(index) must not be empty")
        }
        return values
    }

    /// Decodes an optional plain JSON object (coaty-js `isPlainObject`).
    func decodePlainObjectIfPresent(forKey key: Key) throws -> [String: AnyCodable]? {
        try self.decodeStrictIfPresent([String: AnyCodable].self, forKey: key)
    }

    /// Decodes a required number that must not be negative.
    func decodeNonNegative(forKey key: Key) throws -> Double {
        try self.checkNonNegative(self.decode(Double.self, forKey: key), key)
    }

    /// Decodes an optional number that must not be negative.
    func decodeNonNegativeIfPresent(forKey key: Key) throws -> Double? {
        try self.decodeStrictIfPresent(Double.self, forKey: key).map { try self.checkNonNegative($0, key) }
    }

    private func checkNonNegative(_ value: Double, _ key: Key) throws -> Double {
        guard value >= 0 else { throw self.invalid(key, "must not be negative (found \(value))") }
        return value
    }

    /// A `dataCorrupted` error for `key` with `reason`.
    func invalid(_ key: Key, _ reason: String) -> DecodingError {
        DecodingDiagnostics.note()
        return DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "\(key.stringValue) \(reason)")
    }
}

extension KeyedEncodingContainer {
    /// Encodes a JavaScript number: an integral value as an integer literal (as `JSON.stringify` writes
    /// `1700000000000`), anything else as a floating-point literal.
    mutating func encodeNumber(_ value: Double, forKey key: Key) throws {
        if value.rounded() == value, abs(value) < 9_007_199_254_740_992, let integer = Int64(exactly: value) {
            try self.encode(integer, forKey: key)
        } else {
            try self.encode(value, forKey: key)
        }
    }

    /// Encodes an optional JavaScript number, omitting it when `nil`.
    mutating func encodeNumberIfPresent(_ value: Double?, forKey key: Key) throws {
        guard let value else { return }
        try self.encodeNumber(value, forKey: key)
    }
}
