/// The `objectJoinConditions` of a Query event: one join condition or an array of them.
///
/// The form is kept so that decoded conditions are re-encoded exactly as they arrived.
public enum ObjectJoinConditions: Sendable, Hashable {
    /// One condition, sent as an object.
    case single(ObjectJoinCondition)
    /// Several conditions, sent as an array (possibly empty).
    case multiple([ObjectJoinCondition])

    /// The conditions, whatever the form.
    public var conditions: [ObjectJoinCondition] {
        switch self {
        case .single(let condition): [condition]
        case .multiple(let conditions): conditions
        }
    }
}

extension ObjectJoinConditions: Codable {
    /// Decodes an object or an array of objects.
    ///
    /// - Throws: `DecodingError` naming the element and reason if a condition is invalid.
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var conditions: [ObjectJoinCondition] = []
            while !array.isAtEnd {
                conditions.append(try array.decode(ObjectJoinCondition.self))
            }
            self = .multiple(conditions)
        } else {
            self = .single(try ObjectJoinCondition(from: decoder))
        }
    }

    /// Encodes an object or an array.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .single(let condition): try condition.encode(to: encoder)
        case .multiple(let conditions): try conditions.encode(to: encoder)
        }
    }
}
