#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Encodes values as coaty-js writes them: compact UTF-8 JSON, slashes unescaped, absent optionals
/// omitted (never `null`), enumerations as numbers and ids as their exact (lower-case UUID) strings.
///
/// Comparing with coaty-js output is meaningful on parsed JSON (``AnyCodable/init(json:maximumDepth:)``),
/// since key order may differ.
///
/// ## Determinism
///
/// Equal values encode to the same bytes in every process. The fields of Coaty objects and events are
/// written in the order their `encode(to:)` writes them, and the members of every ``AnyCodable`` object
/// (custom properties, `privateData`, requirements, Call parameters) in ``OutputFormatting/sortedKeys``
/// order, not in a dictionary's order, which Swift randomises per process. The one exception is a
/// dictionary of another value type (`[String: Int]`), which Swift encodes in its own order: use
/// ``OutputFormatting/sortedKeys`` to sort every object's keys, for example to hash or sign the output.
///
/// A value that contains itself through strong references (a reference cycle) is refused with an
/// `EncodingError`, never written until the stack overflows.
public struct CoatyJSONEncoder: Sendable {
    /// Options for the text written.
    public struct OutputFormatting: OptionSet, Sendable, Hashable {
        public let rawValue: Int

        /// Creates options from their raw value.
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// Every object's keys in Unicode code point order (their UTF-8 bytes), like `JSONEncoder`'s
        /// `.sortedKeys` for ASCII keys: the canonical form, for hashing, signing or comparing bytes.
        public static let sortedKeys = OutputFormatting(rawValue: 1 << 0)
    }

    /// Extra user info passed to every `encode(to:)`.
    public var userInfo: [CodingUserInfoKey: any Sendable]
    /// Options for the text written. Defaults to none: keys in the order they are encoded.
    public var outputFormatting: OutputFormatting

    /// Creates an encoder.
    ///
    /// - Parameters:
    ///   - outputFormatting: Options for the text written, such as ``OutputFormatting/sortedKeys``.
    ///   - userInfo: Extra user info for your own types.
    public init(outputFormatting: OutputFormatting = [], userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.outputFormatting = outputFormatting
        self.userInfo = userInfo
    }

    /// Encodes `value` as JSON.
    ///
    /// The output is what Foundation's `JSONEncoder` writes with `.withoutEscapingSlashes`, value for
    /// value (numbers and string escapes byte for byte), except that object keys keep the order they
    /// were encoded in (or are sorted, see ``outputFormatting``), where `JSONEncoder`'s order is a
    /// dictionary's. It is written by the package's
    /// own encoder, in about 0.6× the time (see Docs/ObjectModel.md).
    ///
    /// - Throws: `EncodingError` if a value cannot be encoded (for example a non-finite number, which
    ///   JSON cannot represent), or contains itself through strong references (a reference cycle; the
    ///   description names the objects on it).
    public func encode(_ value: some Encodable) throws -> Data {
        Data(try self.encodeBytes(value))
    }

    /// Encodes `value` as JSON bytes; see ``encode(_:)``.
    package func encodeBytes(_ value: some Encodable) throws -> [UInt8] {
        JSONWriter.write(
            try JSONTreeEncoder.encode(value, userInfo: self.userInfo),
            sortedKeys: self.outputFormatting.contains(.sortedKeys)
        )
    }

    /// Encodes `value` into its JSON value without writing text.
    package func encodeValue(_ value: some Encodable) throws -> AnyCodable {
        try JSONTreeEncoder.encode(value, userInfo: self.userInfo).anyCodable
    }
}
