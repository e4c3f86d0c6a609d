/// One-line coding of a ``CoatyObject`` subclass's own fields.
///
/// An object is one flat JSON object, so a subclass decodes its fields from the same decoder as
/// `super` and encodes them into the same encoder. These helpers name a field by its JSON key and do
/// what the field's type needs: a ``CoatyObject`` (or an array of them) decodes through the decoder's
/// ``ObjectFamily`` under any decoder, keeping its class, and encodes as a reference inside an object
/// graph; a type with a factory or a ``DecoderUpdatable`` type registered in the family goes through
/// its entry; an optional field may be absent but never `null`, as in coaty-js.
///
/// ```swift
/// required init(from decoder: any Decoder) throws {
///     self.urgency = try decoder.decodeProperty("urgency")
///     self.assignee = try decoder.decodePropertyIfPresent("assignee")
///     try super.init(from: decoder)
/// }
///
/// override func encode(to encoder: any Encoder) throws {
///     try super.encode(to: encoder)
///     try encoder.encodeProperty(self.urgency, forKey: "urgency")
///     try encoder.encodePropertyIfPresent(self.assignee, forKey: "assignee")
/// }
/// ```
///
/// List the same keys in ``CoatyObject/propertyKeys``, so that they are not also kept as custom
/// properties.
extension Decoder {
    /// Decodes the member `key` of the JSON object this decoder holds.
    ///
    /// - Parameters:
    ///   - key: The JSON key.
    ///   - type: The type to decode; usually inferred from the property it is assigned to.
    /// - Throws: `DecodingError` if the value is not a JSON object, the key is missing, or its value is
    ///   not a valid `Value`; the coding path names the key.
    public func decodeProperty<Value: Decodable>(_ key: String, as type: Value.Type = Value.self) throws -> Value {
        let container = try self.container(keyedBy: AnyCodingKey.self)
        let codingKey = AnyCodingKey(key)
        // Our decoder routes objects and registered types through the family by itself.
        if self is JSONValueDecoder { return try container.decode(Value.self, forKey: codingKey) }
        let decoder = try container.requiredDecoder(forKey: codingKey)
        return try ObjectFamily.current(in: decoder).decodeValue(Value.self, from: decoder)
    }

    /// Decodes the member `key` if it is present; a present `null` is an error, as in coaty-js.
    ///
    /// - Throws: `DecodingError` if the value is not a JSON object, or the member is `null` or not a valid
    ///   `Value`; the coding path names the key.
    public func decodePropertyIfPresent<Value: Decodable>(
        _ key: String,
        as type: Value.Type = Value.self
    ) throws -> Value? {
        let container = try self.container(keyedBy: AnyCodingKey.self)
        let codingKey = AnyCodingKey(key)
        guard container.contains(codingKey) else { return nil }
        if try container.decodeNil(forKey: codingKey) {
            throw container.invalid(codingKey, "must be omitted when absent, not null")
        }
        return try self.decodeProperty(key, as: type)
    }
}

extension Encoder {
    /// Encodes `value` as the member `key` of the JSON object this encoder writes.
    ///
    /// A ``CoatyObject`` or an array of them is written with `encodeObject(_:forKey:)` or
    /// `encodeObjects(_:forKey:)`, so an object graph writes a reference.
    ///
    /// - Throws: `EncodingError` if the value cannot be encoded.
    public func encodeProperty<Value: Encodable>(_ value: Value, forKey key: String) throws {
        var container = self.container(keyedBy: AnyCodingKey.self)
        if let object = value as? CoatyObject {
            try container.encodeObject(object, forKey: AnyCodingKey(key))
        } else if let objects = value as? [CoatyObject] {
            try container.encodeObjects(objects, forKey: AnyCodingKey(key))
        } else {
            try container.encode(value, forKey: AnyCodingKey(key))
        }
    }

    /// Encodes `value` as the member `key` unless it is `nil` (absent optionals are omitted, never `null`).
    ///
    /// - Throws: `EncodingError` if the value cannot be encoded.
    public func encodePropertyIfPresent<Value: Encodable>(_ value: Value?, forKey key: String) throws {
        guard let value else { return }
        try self.encodeProperty(value, forKey: key)
    }
}
