/// One filter condition: a property and the expression its value must satisfy, sent as
/// `[property, [operator, operands…]]`.
///
/// ```swift
/// let condition = FilterCondition("location.floor", .greaterThanOrEqual(3))
/// ```
public struct FilterCondition: Sendable, Hashable {
    /// The property whose value is tested.
    public var property: FilterProperty
    /// The test.
    public var expression: FilterExpression

    /// Creates a condition.
    ///
    /// - Parameters:
    ///   - property: The property, as a dotted path or as segments. On the wire it must not be the
    ///     empty string (coaty-js rejects it, see ``ContextFilter``); such a condition can still be
    ///     evaluated locally.
    ///   - expression: The test, e.g. `.equals("on")`.
    public init(_ property: FilterProperty, _ expression: FilterExpression) {
        self.property = property
        self.expression = expression
    }
}

extension FilterCondition: Codable {
    /// Decodes `[property, [operator, operands…]]`, validating as coaty-js does.
    ///
    /// - Throws: `DecodingError.dataCorrupted` naming the reason, e.g. a flattened
    ///   `[property, operator, operand]` form, an empty property or an unknown operator.
    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(AnyCodable.self)
        self = try FilterParser.condition(value, at: decoder.codingPath)
    }

    /// Encodes `[property, [operator, operands…]]`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(self.property)
        try container.encode(self.expression)
    }
}
