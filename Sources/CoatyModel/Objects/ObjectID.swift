public import FoundationEssentials

/// The identity of a Coaty object, of an agent (its identity's object id) or of a request (a correlation id).
///
/// Coaty generates lower-case UUID v4 strings, but coaty-js accepts any non-empty string as an id and
/// compares ids as exact, case-sensitive strings; so does this type. ``random()`` makes a lower-case
/// UUID v4 as coaty-js does.
public struct ObjectID: Sendable, Hashable, Codable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The id as it appears on the wire.
    public let rawValue: String

    /// Wraps an id string. Coaty requires ids to be non-empty; validation happens when objects are decoded.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// Wraps a UUID, lower-cased as Coaty writes UUIDs.
    public init(_ uuid: UUID) {
        self.rawValue = uuid.uuidString.lowercased()
    }

    /// Wraps an id string literal.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    /// A new random lower-case UUID v4.
    public static func random() -> ObjectID {
        ObjectID(UUID())
    }

    /// The id as a UUID, if it is one.
    public var uuid: UUID? { UUID(uuidString: self.rawValue) }

    /// Decodes the id string.
    ///
    /// - Throws: `DecodingError` if the value is not a string.
    public init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes the id string verbatim.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.rawValue)
    }

    /// Orders ids by their raw strings.
    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The raw id.
    public var description: String { self.rawValue }
}
