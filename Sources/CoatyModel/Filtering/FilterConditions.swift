/// The `conditions` of a ``ContextFilter`` or ``ObjectFilter``: one condition, or several combined by
/// `and` or by `or`.
///
/// On the wire a single condition is `["prop", [op, …]]`, the combinations are `{"and": […]}` and
/// `{"or": […]}`. An object with neither key, `{}`, is ``all`` and matches everything.
public enum FilterConditions: Sendable, Hashable {
    /// A single condition.
    case single(FilterCondition)
    /// Every condition must hold (an empty list matches everything).
    case and([FilterCondition])
    /// At least one condition must hold (an empty list matches nothing).
    case or([FilterCondition])
    /// The object form with neither `and` nor `or`, `{}`; matches everything.
    case all

    /// The conditions, whatever the combination.
    public var conditions: [FilterCondition] {
        switch self {
        case .single(let condition): [condition]
        case .and(let conditions), .or(let conditions): conditions
        case .all: []
        }
    }
}

extension FilterConditions: Codable {
    /// Decodes a single condition or an `and`/`or` object, validating as coaty-js does.
    ///
    /// - Throws: `DecodingError.dataCorrupted` naming the field and the reason, e.g. both `and` and
    ///   `or` present, `null`, or an invalid condition.
    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(AnyCodable.self)
        self = try FilterParser.conditions(value, at: decoder.codingPath)
    }

    /// Encodes the wire form.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .single(let condition):
            try condition.encode(to: encoder)
        case .and(let conditions):
            var container = encoder.container(keyedBy: CombinationKey.self)
            try container.encode(conditions, forKey: .and)
        case .or(let conditions):
            var container = encoder.container(keyedBy: CombinationKey.self)
            try container.encode(conditions, forKey: .or)
        case .all:
            _ = encoder.container(keyedBy: CombinationKey.self)
        }
    }

    private enum CombinationKey: String, CodingKey {
        case and
        case or
    }
}
