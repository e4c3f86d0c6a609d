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
    /// - Throws: `EncodingError` if a value cannot be encoded (for example a non-finite number, which
    ///   JSON cannot represent).
    public func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        encoder.userInfo = self.userInfo
        return try encoder.encode(value)
    }
}
