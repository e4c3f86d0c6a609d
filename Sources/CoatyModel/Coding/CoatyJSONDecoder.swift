/// Decodes Coaty JSON (event payloads, objects, arrays of objects) with an ``ObjectFamily``.
///
/// It parses the bytes into ``AnyCodable`` first and decodes from that tree, so free-form values
/// (custom properties, `privateData`, Call parameters) are taken as they are and **no error is thrown and
/// caught on valid input**. Validation errors are `DecodingError`s whose coding path names the field and
/// whose description gives the reason.
///
/// Each call to a `decode` method is one decode: identity tracking shares instances within it (and
/// across calls only through an ``ObjectIdentityMap``).
///
/// ```swift
/// let decoder = CoatyJSONDecoder(family: [Light.self])
/// let light = try decoder.decode(Light.self, from: bytes)            // polymorphic, then checked
/// let event = try decoder.decode(AdvertiseEvent.self, from: payload) // any Decodable
/// ```
public struct CoatyJSONDecoder: Sendable {
    /// The classes and factories objects decode into.
    public var family: ObjectFamily
    /// Per-decode options.
    public var options: ObjectDecodingOptions
    /// Extra user info passed to every `init(from:)`.
    public var userInfo: [CodingUserInfoKey: any Sendable]
    /// The deepest nesting of JSON arrays and objects accepted. Defaults to 512, which is also the most
    /// it accepts: parsing, decoding and freeing a tree recurse once per level.
    public var maximumDepth: Int

    /// Creates a decoder.
    ///
    /// - Parameters:
    ///   - family: The object family. Defaults to the built-in types.
    ///   - options: The decoding options. Defaults to failing on bad elements and sharing instances within
    ///     a decode.
    ///   - userInfo: Extra user info for your own types.
    ///   - maximumDepth: The deepest nesting accepted, at most 512.
    public init(
        family: ObjectFamily = ObjectFamily(),
        options: ObjectDecodingOptions = ObjectDecodingOptions(),
        userInfo: [CodingUserInfoKey: any Sendable] = [:],
        maximumDepth: Int = 512
    ) {
        self.family = family
        self.options = options
        self.userInfo = userInfo
        self.maximumDepth = maximumDepth
    }

    /// Decodes any `Decodable` value, for example an event whose `init(from:)` calls
    /// ``ObjectFamily/decodeObject(from:)``.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - json: UTF-8 JSON text.
    /// - Throws: `DecodingError` for malformed JSON or a value `type` rejects.
    public func decode<T: Decodable>(_ type: T.Type, from json: some Collection<UInt8>) throws -> T {
        try self.decode(type, fromValue: try JSONParser.parse(json, maximumDepth: self.maximumDepth))
    }

    /// Decodes an object polymorphically through the family and checks that it is a `T`.
    ///
    /// `decode(CoatyObject.self, from:)` returns whatever class the object's type maps to.
    ///
    /// - Throws: `DecodingError` for malformed JSON, an invalid object, or an object of another class.
    public func decode<T: CoatyObject>(_ type: T.Type, from json: some Collection<UInt8>) throws -> T {
        try self.decode(type, fromValue: try JSONParser.parse(json, maximumDepth: self.maximumDepth))
    }

    /// Decodes a JSON array of objects polymorphically, element by element, following the element-failure
    /// policy, and checks that each is a `T`.
    ///
    /// - Throws: `DecodingError` for malformed JSON, a value that is not an array, or (under
    ///   ``ObjectDecodingOptions/ElementFailurePolicy/fail``) the first bad element, named by index.
    public func decode<T: CoatyObject>(_ type: [T].Type, from json: some Collection<UInt8>) throws -> [T] {
        try self.decode(type, fromValue: try JSONParser.parse(json, maximumDepth: self.maximumDepth))
    }

    /// Decodes any `Decodable` value from already-parsed JSON.
    ///
    /// - Throws: `DecodingError` for a value `type` rejects.
    public func decode<T: Decodable>(_ type: T.Type, fromValue value: AnyCodable) throws -> T {
        try self.makeDecoder(value).unbox(type)
    }

    /// Decodes an object polymorphically from already-parsed JSON and checks that it is a `T`.
    ///
    /// - Throws: `DecodingError` for an invalid object or an object of another class.
    public func decode<T: CoatyObject>(_ type: T.Type, fromValue value: AnyCodable) throws -> T {
        let decoder = self.makeDecoder(value)
        return try Self.cast(try self.family.decodeObject(from: decoder), to: type, codingPath: [])
    }

    /// Decodes an array of objects polymorphically from already-parsed JSON.
    ///
    /// - Throws: `DecodingError` for a value that is not an array or a bad element (see the policy).
    public func decode<T: CoatyObject>(_ type: [T].Type, fromValue value: AnyCodable) throws -> [T] {
        try self.family.decodeObjects(T.self, from: self.makeDecoder(value))
    }

    /// The decoder for one decode: its user info holds the app's entries, the family, and the options
    /// with a fresh identity scope, made when first read (see ``DecodingUserInfo``).
    private func makeDecoder(_ value: AnyCodable) -> JSONValueDecoder {
        JSONValueDecoder(
            value: value,
            node: .root,
            context: DecodingUserInfo(self.userInfo, family: self.family, options: self.options)
        )
    }

    static func cast<T: CoatyObject>(_ object: CoatyObject, to type: T.Type, codingPath: [any CodingKey]) throws -> T {
        guard let result = object as? T else { throw Self.mismatch(object, expected: type, codingPath: codingPath) }
        return result
    }

    /// The error for an object that decoded as another class than the one asked for.
    static func mismatch(_ object: CoatyObject, expected type: Any.Type, codingPath: [any CodingKey]) -> DecodingError {
        DecodingDiagnostics.note()
        return DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: codingPath,
                debugDescription: "object type '\(object.objectType)' decoded as \(Swift.type(of: object)), "
                    + "which is not a \(type)"
            )
        )
    }
}
