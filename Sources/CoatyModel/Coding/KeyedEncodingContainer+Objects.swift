extension KeyedEncodingContainer {
    /// Encodes a nested object; in an object graph it is written once and referenced here.
    ///
    /// - Throws: `EncodingError` if the object cannot be encoded.
    public mutating func encodeObject(_ object: CoatyObject, forKey key: Key) throws {
        try Self.encode(object, to: self.superEncoder(forKey: key))
    }

    /// Writes `object` into `encoder`, or a reference to it inside an object graph.
    static func encode(_ object: CoatyObject, to encoder: any Encoder) throws {
        if let encoder = encoder as? JSONTreeEncoder {
            // Also refuses an object that contains itself, which would be written forever.
            try encoder.encodeObject(object)
        } else if let graph = encoder.userInfo[.objectGraphEncodingState] as? ObjectGraphEncodingState {
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
            try Self.encode(object, to: container.superEncoder())
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
