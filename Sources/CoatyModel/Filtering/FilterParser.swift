/// Parses and validates the filter wire forms from JSON values, with the rules of coaty-js's
/// `isContextFilterValid`, `isObjectFilterValid` and `areObjectJoinConditionsValid`.
///
/// Every error is a `DecodingError.dataCorrupted` whose coding path names the offending field and whose
/// description states the reason.
enum FilterParser {
    /// A coding key for an array index.
    struct IndexKey: CodingKey {
        let intValue: Int?
        var stringValue: String { "Index \(self.intValue ?? 0)" }

        init(_ index: Int) {
            self.intValue = index
        }

        init?(intValue: Int) {
            self.intValue = intValue
        }

        init?(stringValue: String) {
            return nil
        }
    }

    static func error(_ path: [any CodingKey], _ reason: String) -> DecodingError {
        let field =
            path.isEmpty
            ? "filter" : path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        return DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(field): \(reason)"))
    }

    static func kind(_ value: AnyCodable) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .uint, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Returns the keyed container of a filter object, with a clear error if the value is not an object.
    static func filterContainer<Key: CodingKey>(
        _ decoder: any Decoder,
        keyedBy type: Key.Type
    ) throws -> KeyedDecodingContainer<Key> {
        let value = try decoder.singleValueContainer().decode(AnyCodable.self)
        guard case .object = value else {
            throw Self.error(decoder.codingPath, "must be a JSON object, found \(Self.kind(value))")
        }
        return try decoder.container(keyedBy: type)
    }

    static func decodeConditions<Key: CodingKey>(
        _ container: KeyedDecodingContainer<Key>,
        forKey key: Key
    ) throws -> FilterConditions? {
        guard container.contains(key) else { return nil }
        let value = try container.decode(AnyCodable.self, forKey: key)
        return try Self.conditions(value, at: container.codingPath + [key])
    }

    static func decodeCount<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, forKey key: Key) throws -> Int? {
        guard container.contains(key) else { return nil }
        let value = try container.decode(AnyCodable.self, forKey: key)
        switch value {
        case .int(let count):
            return count
        case .uint(let count):
            throw Self.error(container.codingPath + [key], "must be an integer that fits in Int, found \(count)")
        case .double(let count):
            guard let count = Int(exactly: count) else {
                throw Self.error(container.codingPath + [key], "must be an integer, found \(count)")
            }
            return count
        default:
            throw Self.error(container.codingPath + [key], "must be a number, found \(Self.kind(value))")
        }
    }

    static func decodeFlag<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, forKey key: Key) throws -> Bool? {
        guard container.contains(key) else { return nil }
        let value = try container.decode(AnyCodable.self, forKey: key)
        guard case .bool(let flag) = value else {
            throw Self.error(container.codingPath + [key], "must be a boolean if present, found \(Self.kind(value))")
        }
        return flag
    }

    static func filterOperator(_ value: AnyCodable, at path: [any CodingKey]) throws -> FilterOperator {
        guard value.doubleValue != nil else {
            throw Self.error(path, "operator must be a number, found \(Self.kind(value))")
        }
        guard let code = value.intValue, let filterOperator = FilterOperator(rawValue: code) else {
            throw Self.error(path, "unknown operator \(value.doubleValue ?? 0); operators are 0 to 14")
        }
        return filterOperator
    }

    static func property(_ value: AnyCodable, at path: [any CodingKey], allowsEmptyString: Bool) throws
        -> FilterProperty
    {
        switch value {
        case .string(let path) where allowsEmptyString || !path.isEmpty:
            return .dotted(path)
        case .string:
            throw Self.error(path, "property must not be the empty string")
        case .array(let elements):
            var segments: [String] = []
            for (index, element) in elements.enumerated() {
                guard case .string(let segment) = element else {
                    throw Self.error(
                        path + [IndexKey(index)],
                        "property path segments must be strings, found \(Self.kind(element))"
                    )
                }
                segments.append(segment)
            }
            return .segments(segments)
        default:
            throw Self.error(path, "property must be a string or an array of strings, found \(Self.kind(value))")
        }
    }

    static func expression(_ value: AnyCodable, at path: [any CodingKey]) throws -> FilterExpression {
        guard case .array(let elements) = value else {
            throw Self.error(path, "expression must be an array [operator, operands…], found \(Self.kind(value))")
        }
        guard let first = elements.first else {
            throw Self.error(path, "expression must not be empty; it starts with the operator")
        }
        let filterOperator = try Self.filterOperator(first, at: path + [IndexKey(0)])
        return FilterExpression(filterOperator, Array(elements.dropFirst()))
    }

    static func condition(_ value: AnyCodable, at path: [any CodingKey]) throws -> FilterCondition {
        guard case .array(let elements) = value else {
            throw Self.error(
                path,
                "condition must be an array [property, [operator, operands…]], found \(Self.kind(value))"
            )
        }
        guard elements.count == 2 else {
            throw Self.error(
                path,
                "condition must have exactly 2 elements [property, [operator, operands…]], found \(elements.count)"
                    + " (the flattened form [property, operator, operands…] is not valid)"
            )
        }
        let property = try Self.property(elements[0], at: path + [IndexKey(0)], allowsEmptyString: false)
        let expression = try Self.expression(elements[1], at: path + [IndexKey(1)])
        return FilterCondition(property, expression)
    }

    static func conditions(_ value: AnyCodable, at path: [any CodingKey]) throws -> FilterConditions {
        switch value {
        case .array:
            return .single(try Self.condition(value, at: path))
        case .object(let members):
            let and = members["and"]
            let or = members["or"]
            if and != nil && or != nil {
                throw Self.error(path, "must not contain both \"and\" and \"or\"")
            }
            if let and {
                return .and(try Self.conditionArray(and, at: path + [AnyCodingKey("and")]))
            }
            if let or {
                return .or(try Self.conditionArray(or, at: path + [AnyCodingKey("or")]))
            }
            return .all
        default:
            throw Self.error(
                path,
                "must be a condition array or an object with \"and\" or \"or\", found \(Self.kind(value))"
            )
        }
    }

    static func conditionArray(_ value: AnyCodable, at path: [any CodingKey]) throws -> [FilterCondition] {
        guard case .array(let elements) = value else {
            throw Self.error(path, "must be an array of conditions, found \(Self.kind(value))")
        }
        return try elements.enumerated().map { index, element in
            try Self.condition(element, at: path + [IndexKey(index)])
        }
    }

    static func ordering(_ value: AnyCodable, at path: [any CodingKey]) throws -> FilterOrdering {
        guard case .array(let elements) = value, elements.count == 2 else {
            throw Self.error(path, "ordering must be a two-element array [property, \"Asc\" | \"Desc\"]")
        }
        let property = try Self.property(elements[0], at: path + [IndexKey(0)], allowsEmptyString: true)
        guard case .string(let name) = elements[1], let order = FilterSortOrder(rawValue: name) else {
            throw Self.error(path + [IndexKey(1)], "sort order must be \"Asc\" or \"Desc\"")
        }
        return FilterOrdering(property, order)
    }
}
