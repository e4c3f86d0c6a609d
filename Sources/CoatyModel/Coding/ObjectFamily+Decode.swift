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
