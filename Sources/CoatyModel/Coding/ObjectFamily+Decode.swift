extension ObjectFamily {
    /// Decodes any `Decodable` value (for example an event) with this family.
    ///
    /// Shorthand for `CoatyJSONDecoder(family: self, options: options).decode(type, from: json)`.
    ///
    /// - Throws: `DecodingError` naming the field and the reason.
    public func decode<T: Decodable>(
        _ type: T.Type,
        from json: some Collection<UInt8>,
        options: ObjectDecodingOptions = ObjectDecodingOptions()
    ) throws -> T {
        try CoatyJSONDecoder(family: self, options: options).decode(type, from: json)
    }

    /// Decodes one object polymorphically and checks that it is a `T`.
    ///
    /// - Throws: `DecodingError` naming the field and the reason, or a type mismatch.
    public func decode<T: CoatyObject>(
        _ type: T.Type,
        from json: some Collection<UInt8>,
        options: ObjectDecodingOptions = ObjectDecodingOptions()
    ) throws -> T {
        try CoatyJSONDecoder(family: self, options: options).decode(type, from: json)
    }

    /// Decodes a heterogeneous array of objects polymorphically, following the element-failure policy.
    ///
    /// - Throws: `DecodingError`; under the `fail` policy its coding path names the bad element's index.
    public func decode<T: CoatyObject>(
        _ type: [T].Type,
        from json: some Collection<UInt8>,
        options: ObjectDecodingOptions = ObjectDecodingOptions()
    ) throws -> [T] {
        try CoatyJSONDecoder(family: self, options: options).decode(type, from: json)
    }
}

extension KeyedDecodingContainer {
    /// Decodes a nested object polymorphically through the decoder's ``ObjectFamily`` and checks its class.
    ///
    /// Use it in `init(from:)` for object-valued properties, so that they honour the family, identity
    /// tracking and object-graph references.
    ///
    /// - Throws: `DecodingError` if the key is missing, the object is invalid, or of another class.
    public func decodeObject<T: CoatyObject>(_ type: T.Type, forKey key: Key) throws -> T {
        guard self.contains(key) else {
            DecodingDiagnostics.note()
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: self.codingPath, debugDescription: "required key '\(key.stringValue)' is missing"))
        }
        let decoder = try self.superDecoder(forKey: key)
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
        guard self.contains(key) else {
            DecodingDiagnostics.note()
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: self.codingPath, debugDescription: "required key '\(key.stringValue)' is missing"))
        }
        let decoder = try self.superDecoder(forKey: key)
        let objects = try ObjectFamily.current(in: decoder).decodeObjects(from: decoder)
        return try CoatyJSONDecoder.castElements(objects, to: T.self, decoder: decoder)
    }

    /// Decodes a nested array of objects if the key is present (it must not be `null`).
    ///
    /// - Throws: `DecodingError` as ``decodeObjects(_:forKey:)``.
    public func decodeObjectsIfPresent<T: CoatyObject>(_ type: [T].Type, forKey key: Key) throws -> [T]? {
        guard self.contains(key) else { return nil }
        return try self.decodeObjects(type, forKey: key)
    }
}

extension KeyedEncodingContainer {
    /// Encodes a nested object; in an object graph it is written once and referenced here.
    ///
    /// - Throws: `EncodingError` if the object cannot be encoded.
    public mutating func encodeObject(_ object: CoatyObject, forKey key: Key) throws {
        let encoder = self.superEncoder(forKey: key)
        if let graph = encoder.userInfo[.objectGraphEncodingState] as? ObjectGraphEncodingState {
            try graph.encodeReference(to: object, strong: true, encoder: encoder)
        } else {
            try object.encode(to: encoder)
        }
    }

    /// Encodes a nested object if it is not `nil` (absent optionals are omitted).
    ///
    /// - Throws: `EncodingError` if the object cannot be encoded.
    public mutating func encodeObjectIfPresent(_ object: CoatyObject?, forKey key: Key) throws {
        guard let object else { return }
        try self.encodeObject(object, forKey: key)
    }

    /// Encodes an array of objects; in an object graph each is written once and referenced here.
    ///
    /// - Throws: `EncodingError` if an object cannot be encoded.
    public mutating func encodeObjects(_ objects: [CoatyObject], forKey key: Key) throws {
        var container = self.nestedUnkeyedContainer(forKey: key)
        for object in objects {
            let encoder = container.superEncoder()
            if let graph = encoder.userInfo[.objectGraphEncodingState] as? ObjectGraphEncodingState {
                try graph.encodeReference(to: object, strong: true, encoder: encoder)
            } else {
                try object.encode(to: encoder)
            }
        }
    }

    /// Encodes an array of objects if it is not `nil`.
    ///
    /// - Throws: `EncodingError` if an object cannot be encoded.
    public mutating func encodeObjectsIfPresent(_ objects: [CoatyObject]?, forKey key: Key) throws {
        guard let objects else { return }
        try self.encodeObjects(objects, forKey: key)
    }
}
