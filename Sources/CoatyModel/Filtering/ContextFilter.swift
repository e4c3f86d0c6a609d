/// A filter over the properties of a JSON value, sent as `{"conditions"?: …}`: the `filter` of a Call
/// event, matched against the context object of an observer.
///
/// ```swift
/// let filter = ContextFilter(conditions: .single(.init("floor", .between(6, 8))))
/// filter.matches(["floor": 7])     // true
/// ```
///
/// Decoding validates exactly as coaty-js's `isContextFilterValid`: `conditions` absent, one valid
/// condition, or an object with `and` or `or` (not both) holding arrays of valid conditions. A valid
/// condition is a two-element array of a non-empty property (a string, or an array of strings) and an
/// expression array whose first element is a known operator code. Operands are not checked.
public struct ContextFilter: Sendable, Hashable {
    /// The conditions; `nil` matches everything.
    public var conditions: FilterConditions?

    /// Creates a filter.
    ///
    /// - Parameter conditions: The conditions; `nil` matches everything.
    public init(conditions: FilterConditions? = nil) {
        self.conditions = conditions
    }

    /// Creates a filter from one condition.
    ///
    /// - Parameter condition: The only condition.
    public init(_ condition: FilterCondition) {
        self.conditions = .single(condition)
    }
}

extension ContextFilter: Codable {
    private enum CodingKeys: String, CodingKey {
        case conditions
    }

    /// Decodes and validates a filter object; unknown keys are ignored.
    ///
    /// - Throws: `DecodingError` naming the field and the reason when the filter is not an object or
    ///   `conditions` is `null` or invalid.
    public init(from decoder: any Decoder) throws {
        let container = try FilterParser.filterContainer(decoder, keyedBy: CodingKeys.self)
        self.conditions = try FilterParser.decodeConditions(container, forKey: .conditions)
    }

    /// Encodes the filter, omitting absent `conditions`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(self.conditions, forKey: .conditions)
    }
}
