extension KeyedDecodingContainer {
    /// Decodes a nested object polymorphically through the decoder's ``ObjectFamily`` and checks its class.
    ///
    /// Use it in `init(from:)` for object-valued properties, so that they honour the family, identity
    /// tracking and object-graph references.
    ///
    /// - Throws: `DecodingError` if the key is missing, the object is invalid, or of another class.
    public func decodeObject<T: CoatyObject>(_ type: T.Type, forKey key: Key) throws -> T {
        let decoder = try self.requiredDecoder(forKey: key)
        let object = try ObjectFamily.current(in: decoder).decodeObject(from: decoder)
        return try CoatyJSONDecoder.cast(object, to: type, codingPath: decoder.codingPath)
    }

    /// Decodes a nested object if the key is present (it must not be `null`, as in coaty-js).
    ///
    /// - Throws: `DecodingError` if the value is `null`, invalid, or of another class.
    public func decodeObjectIfPresent<T: CoatyObject>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard self.contains(key) else { return nil }
        return try self.decodeObject(type, forKey: key)
    }

    /// Decodes a nested heterogeneous array of objects through the decoder's ``ObjectFamily``.
    ///
    /// - Throws: `DecodingError` if the key is missing, the value is not an array, or an element is bad
    ///   (under the `fail` policy), named by index.
    public func decodeObjects<T: CoatyObject>(_ type: [T].Type, forKey key: Key) throws -> [T] {
        let decoder = try self.requiredDecoder(forKey: key)
        return try ObjectFamily.current(in: decoder).decodeObjects(T.self, from: decoder)
    }

    /// Decodes a nested array of objects if the key is present (it must not be `null`).
    ///
    /// - Throws: `DecodingError` as ``decodeObjects(_:forKey:)``.
    public func decodeObjectsIfPresent<T: CoatyObject>(_ type: [T].Type, forKey key: Key) throws -> [T]? {
        guard self.contains(key) else { return nil }
        return try self.decodeObjects(type, forKey: key)
    }

    /// The decoder of a required key's value; a missing key is a `keyNotFound` error naming it.
    func requiredDecoder(forKey key: Key) throws -> any Decoder {
        guard self.contains(key) else {
            DecodingDiagnostics.note()
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: self.codingPath,
                    debugDescription: "required key '\(key.stringValue)' is missing"
                )
            )
        }
        return try self.superDecoder(forKey: key)
    }
}
