/// The right-hand side of a filter condition: an operator and its operands, sent as
/// `[operator, operand1?, operand2?]`.
///
/// Build expressions with the static factories, which take the operands each operator needs:
///
/// ```swift
/// let condition = FilterCondition("floor", .between(6, 8))
/// let named = FilterCondition("name", .like("Thing%"))
/// ```
///
/// Operands are not type-checked, exactly as in coaty-js: an expression decoded from the wire keeps
/// whatever operands it carried (also more than two), and evaluation treats a missing operand as
/// JavaScript's `undefined`.
public struct FilterExpression: Sendable, Hashable {
    /// The operator.
    public var `operator`: FilterOperator
    /// The operands, in wire order. Most operators use one, ``FilterOperator/between`` and
    /// ``FilterOperator/notBetween`` use two, ``FilterOperator/exists`` and ``FilterOperator/notExists``
    /// none.
    public var operands: [AnyCodable]

    /// Creates an expression from an operator and its operands.
    ///
    /// - Parameters:
    ///   - operator: The operator.
    ///   - operands: The operands, in wire order.
    public init(_ operator: FilterOperator, _ operands: [AnyCodable] = []) {
        self.operator = `operator`
        self.operands = operands
    }

    /// The first operand, or `nil` (JavaScript `undefined`) if there is none.
    var operand1: AnyCodable? { self.operands.first }

    /// The second operand, or `nil` (JavaScript `undefined`) if there is none.
    ///
    /// `.none` and not `nil`: `AnyCodable` is `ExpressibleByNilLiteral`, so a `nil` in the conditional
    /// expression would be JSON `null` and a missing operand would compare as `0`.
    var operand2: AnyCodable? { self.operands.count > 1 ? self.operands[1] : .none }
}

extension FilterExpression {
    /// Matches values less than `operand`: numbers numerically, strings by ``FilterCollation``, other
    /// combinations as JavaScript's `<` does.
    public static func lessThan(_ operand: AnyCodable) -> Self { Self(.lessThan, [operand]) }
    /// Matches values less than or equal to `operand`.
    public static func lessThanOrEqual(_ operand: AnyCodable) -> Self { Self(.lessThanOrEqual, [operand]) }
    /// Matches values greater than `operand`.
    public static func greaterThan(_ operand: AnyCodable) -> Self { Self(.greaterThan, [operand]) }
    /// Matches values greater than or equal to `operand`.
    public static func greaterThanOrEqual(_ operand: AnyCodable) -> Self { Self(.greaterThanOrEqual, [operand]) }
    /// Matches values in the closed range between the operands, which may be given in either order.
    public static func between(_ operand1: AnyCodable, _ operand2: AnyCodable) -> Self {
        Self(.between, [operand1, operand2])
    }
    /// Matches values outside the closed range between the operands, which may be given in either order.
    public static func notBetween(_ operand1: AnyCodable, _ operand2: AnyCodable) -> Self {
        Self(.notBetween, [operand1, operand2])
    }
    /// Matches strings that match the SQL `LIKE` pattern as a whole, case-sensitively.
    ///
    /// `_` matches one character (one UTF-16 code unit, as in JavaScript), `%` any run of characters;
    /// neither matches a line terminator. `\` escapes the next character (`\\` is a literal backslash,
    /// `\%` a literal percent sign).
    public static func like(_ pattern: String) -> Self { Self(.like, [.string(pattern)]) }
    /// Matches values that deep-equal `operand` (objects by members, arrays by elements in order).
    public static func equals(_ operand: AnyCodable) -> Self { Self(.equals, [operand]) }
    /// Matches values that do not deep-equal `operand`.
    public static func notEquals(_ operand: AnyCodable) -> Self { Self(.notEquals, [operand]) }
    /// Matches every value of a property that exists (also `null`).
    public static var exists: Self { Self(.exists) }
    /// Matches only a missing property.
    public static var notExists: Self { Self(.notExists) }
    /// Matches values that contain `operand`: objects containing its members recursively, arrays
    /// containing all its elements (order and duplicates ignored); an array also contains a primitive
    /// element at the top level.
    public static func contains(_ operand: AnyCodable) -> Self { Self(.contains, [operand]) }
    /// Matches values that do not contain `operand`.
    public static func notContains(_ operand: AnyCodable) -> Self { Self(.notContains, [operand]) }
    /// Matches values that deep-equal one of `values`.
    public static func `in`(_ values: [AnyCodable]) -> Self { Self(.in, [.array(values)]) }
    /// Matches values that deep-equal none of `values`.
    public static func notIn(_ values: [AnyCodable]) -> Self { Self(.notIn, [.array(values)]) }
}

extension FilterExpression: Codable {
    /// Decodes `[operator, operands…]`.
    ///
    /// - Throws: `DecodingError.dataCorrupted` if the value is not a non-empty array starting with a
    ///   known integer operator code.
    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(AnyCodable.self)
        self = try FilterParser.expression(value, at: decoder.codingPath)
    }

    /// Encodes `[operator, operands…]`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(self.operator.rawValue)
        for operand in self.operands { try container.encode(operand) }
    }
}
