public import FoundationEssentials

/// Encodes values as coaty-js writes them: compact UTF-8 JSON, slashes unescaped, absent optionals
/// omitted (never `null`), enumerations as numbers and ids as their exact (lower-case UUID) strings.
///
/// Comparing with coaty-js output is meaningful on parsed JSON (``AnyCodable/init(json:maximumDepth:)``),
/// since key order may differ.
public struct CoatyJSONEncoder: Sendable {
    /// Extra user info passed to every `encode(to:)`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Creates an encoder.
    ///
    /// - Parameter userInfo: Extra user info for your own types.
    public init(userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.userInfo = userInfo
    }

    /// Encodes `value` as JSON.
    ///
    /// The output is what Foundation's `JSONEncoder` writes with `.withoutEscapingSlashes`, value for
    /// value (numbers and string escapes byte for byte), except that object keys keep the order they
    /// were encoded in, where `JSONEncoder`'s order is a dictionary's. It is written by the package's
    /// own encoder, in about 0.6× the time (see Docs/ObjectModel.md).
    ///
    /// - Throws: `EncodingError` if a value cannot be encoded (for example a non-finite number, which
    ///   JSON cannot represent).
    public func encode(_ value: some Encodable) throws -> Data {
        Data(try self.encodeBytes(value))
    }

    /// Encodes `value` as JSON bytes; see ``encode(_:)``.
    package func encodeBytes(_ value: some Encodable) throws -> [UInt8] {
        JSONWriter.write(try JSONTreeEncoder.encode(value, userInfo: self.userInfo))
    }

    /// Encodes `value` into its JSON value without writing text.
    package func encodeValue(_ value: some Encodable) throws -> AnyCodable {
        try JSONTreeEncoder.encode(value, userInfo: self.userInfo).anyCodable
    }
}
