/// An operator of a filter condition, sent on the wire as its integer code.
///
/// The codes are the indexes of coaty-js's `ObjectFilterOperator` enum: ``lessThan`` is `0`, ``notIn`` is
/// `14`. See ``FilterExpression`` for the operands each operator takes and how it is evaluated.
public enum FilterOperator: Int, Sendable, Hashable, Codable, CaseIterable {
    /// The value is less than the operand (strings by collation, see ``FilterExpression/lessThan(_:)``).
    case lessThan = 0
    /// The value is less than or equal to the operand.
    case lessThanOrEqual = 1
    /// The value is greater than the operand.
    case greaterThan = 2
    /// The value is greater than or equal to the operand.
    case greaterThanOrEqual = 3
    /// The value lies between the two operands, inclusive; the operands may come in either order.
    case between = 4
    /// The value lies outside the two operands; the operands may come in either order.
    case notBetween = 5
    /// The string value matches an SQL `LIKE` pattern.
    case like = 6
    /// The value deep-equals the operand.
    case equals = 7
    /// The value does not deep-equal the operand.
    case notEquals = 8
    /// The property exists.
    case exists = 9
    /// The property does not exist (the only operator that matches a missing property).
    case notExists = 10
    /// The value contains the operand (object members and array elements, recursively).
    case contains = 11
    /// The value does not contain the operand.
    case notContains = 12
    /// The value deep-equals one element of the operand array.
    case `in` = 13
    /// The value deep-equals no element of the operand array.
    case notIn = 14

    /// Decodes the integer code.
    ///
    /// - Throws: `DecodingError.dataCorrupted` if the value is not an integer from 0 to 14.
    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(AnyCodable.self)
        self = try FilterParser.filterOperator(value, at: decoder.codingPath)
    }

    /// Encodes the integer code.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.rawValue)
    }
}
