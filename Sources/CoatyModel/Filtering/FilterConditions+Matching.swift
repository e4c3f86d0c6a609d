extension FilterCondition {
    /// Returns whether `value` satisfies this condition, with the semantics of coaty-js's `ObjectMatcher`.
    ///
    /// The property is looked up by walking its path through objects (by key) and arrays (by index).
    /// If it is missing, only ``FilterOperator/notExists`` matches. Relational operators compare two
    /// strings by ``FilterCollation`` and everything else as JavaScript's `<` does. Where coaty-js throws,
    /// neither an operator nor its negation matches: ``FilterOperator/in`` and ``FilterOperator/notIn``
    /// with an operand that is not an array, ``FilterOperator/contains`` and
    /// ``FilterOperator/notContains`` where an object would be tested against `null`.
    ///
    /// - Parameter value: The JSON value to test, usually an object.
    /// - Returns: Whether the condition holds.
    public func matches(_ value: AnyCodable) -> Bool {
        typealias JS = JavaScriptSemantics
        let property = JS.lookup(self.property.segments, in: value)
        let expression = self.expression
        if expression.operator == .notExists { return property == nil }
        guard let property else { return false }
        let operand1 = expression.operand1
        let operand2 = expression.operand2
        switch expression.operator {
        case .lessThan:
            return JS.isLess(property, operand1)
        case .lessThanOrEqual:
            return JS.isLessOrEqual(property, operand1)
        case .greaterThan:
            return JS.isLess(operand1, property)
        case .greaterThanOrEqual:
            return JS.isLessOrEqual(operand1, property)
        case .between, .notBetween:
            let isBetween = expression.operator == .between
            if case .string(let text) = property, case .string(let low)? = operand1, case .string(let high)? = operand2
            {
                let (lower, upper) = FilterCollation.compare(low, high) > 0 ? (high, low) : (low, high)
                let aboveLower = FilterCollation.compare(text, lower)
                let belowUpper = FilterCollation.compare(text, upper)
                return isBetween ? aboveLower >= 0 && belowUpper <= 0 : aboveLower < 0 || belowUpper > 0
            }
            let (lower, upper) = JS.jsGreater(operand1, operand2) ? (operand2, operand1) : (operand1, operand2)
            if isBetween {
                return (JS.lessThan(property, lower).map { !$0 } ?? false)
                    && (JS.lessThan(upper, property).map { !$0 } ?? false)
            }
            return (JS.lessThan(property, lower) ?? false) || (JS.lessThan(upper, property) ?? false)
        case .like:
            guard case .string(let text) = property, case .string(let pattern)? = operand1 else { return false }
            return JS.like(text, pattern: pattern)
        case .equals:
            return JS.deepEquals(property, operand1)
        case .notEquals:
            return !JS.deepEquals(property, operand1)
        case .exists:
            return true
        case .notExists:
            return false
        case .contains:
            return JS.contains(property, operand1) ?? false
        case .notContains:
            return JS.contains(property, operand1).map { !$0 } ?? false
        case .in:
            return JS.includes(operand1, property) ?? false
        case .notIn:
            return JS.includes(operand1, property).map { !$0 } ?? false
        }
    }
}

extension FilterConditions {
    /// Returns whether `value` satisfies the conditions: ``and(_:)`` all of them, ``or(_:)`` at least
    /// one, ``all`` always.
    ///
    /// - Parameter value: The JSON value to test.
    /// - Returns: Whether the conditions hold.
    public func matches(_ value: AnyCodable) -> Bool {
        switch self {
        case .single(let condition): condition.matches(value)
        case .and(let conditions): conditions.allSatisfy { $0.matches(value) }
        case .or(let conditions): conditions.contains { $0.matches(value) }
        case .all: true
        }
    }
}

extension ContextFilter {
    /// Returns whether `value` satisfies the filter's conditions; a filter without conditions matches
    /// every value.
    ///
    /// - Parameter value: The JSON value to test, usually an object.
    /// - Returns: Whether the value matches.
    public func matches(_ value: AnyCodable) -> Bool {
        self.conditions?.matches(value) ?? true
    }

    /// Returns whether `object`, as its JSON form, satisfies the filter's conditions.
    ///
    /// - Parameter object: The object to test.
    /// - Returns: Whether the object matches; `false` if it cannot be encoded (see
    ///   `CoatyObject.jsonValue`).
    public func matches(_ object: CoatyObject) -> Bool {
        guard let value = try? object.jsonValue else { return false }
        return self.matches(value)
    }
}

extension ObjectFilter {
    /// Returns whether `value` satisfies the filter's conditions; ordering and paging are ignored.
    ///
    /// - Parameter value: The JSON value to test, usually an object.
    /// - Returns: Whether the value matches.
    public func matches(_ value: AnyCodable) -> Bool {
        self.conditions?.matches(value) ?? true
    }

    /// Returns whether `object`, as its JSON form, satisfies the filter's conditions.
    ///
    /// - Parameter object: The object to test.
    /// - Returns: Whether the object matches; `false` if it cannot be encoded.
    public func matches(_ object: CoatyObject) -> Bool {
        guard let value = try? object.jsonValue else { return false }
        return self.matches(value)
    }
}
