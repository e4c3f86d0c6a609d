/// The property a filter condition or ordering refers to: a dot-separated path or an array of path
/// segments.
///
/// Both forms address nested properties: `"location.floor"` and `["location", "floor"]` are the same
/// property. The array form can name properties whose names contain dots. The form is kept so that a
/// decoded property is re-encoded exactly as it arrived.
///
/// ```swift
/// let floor: FilterProperty = "location.floor"
/// let dotted: FilterProperty = ["name.with.dots"]
/// ```
public enum FilterProperty: Sendable, Hashable {
    /// A path written as one string with segments separated by `.`, e.g. `"location.floor"`.
    case dotted(String)
    /// A path given as its segments, e.g. `["location", "floor"]`. An empty path is the value itself.
    case segments([String])

    /// The path segments: the dotted string split at every `.` (so `""` is `[""]` and `".."` is
    /// `["", "", ""]`), or the segments as given.
    public var segments: [String] {
        switch self {
        case .dotted(let path): path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        case .segments(let segments): segments
        }
    }
}

extension FilterProperty: ExpressibleByStringLiteral {
    /// Creates a dotted property path.
    public init(stringLiteral value: String) {
        self = .dotted(value)
    }
}

extension FilterProperty: ExpressibleByArrayLiteral {
    /// Creates a property path from its segments.
    public init(arrayLiteral elements: String...) {
        self = .segments(elements)
    }
}

extension FilterProperty: Codable {
    /// Decodes a string or an array of strings.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for any other JSON value.
    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(AnyCodable.self)
        self = try FilterParser.property(value, at: decoder.codingPath, allowsEmptyString: true)
    }

    /// Encodes the string or the array of segments.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .dotted(let path): try container.encode(path)
        case .segments(let segments): try container.encode(segments)
        }
    }
}
