/// The JavaScript semantics that coaty-js's `ObjectMatcher` and `util/deep.ts` rely on, over JSON values.
///
/// `nil` stands for JavaScript's `undefined` (a missing property or operand).
enum JavaScriptSemantics {
    // MARK: Property lookup

    /// Walks `segments` from `root` the way `ObjectMatcher.getFilterPropertyValue` does: each step indexes
    /// an object by key or an array by a canonical index (or `length`); anything else is `undefined`.
    static func lookup(_ segments: [String], in root: AnyCodable) -> AnyCodable? {
        var current: AnyCodable? = root
        for segment in segments {
            switch current {
            case .object(let members)?:
                current = Self.member(segment, of: members)
            case .array(let elements)?:
                if segment == "length" {
                    current = .int(elements.count)
                } else if let index = Self.arrayIndex(segment), index < elements.count {
                    current = elements[index]
                } else {
                    current = nil
                }
            default:
                return nil
            }
        }
        return current
    }

    private static func arrayIndex(_ segment: String) -> Int? {
        guard let first = segment.utf8.first, segment.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        if first == 0x30 && segment.utf8.count > 1 { return nil }
        return Int(segment)
    }

    // MARK: Equality and containment

    /// The member named exactly `key`, code point for code point, as a JavaScript property is found.
    static func member(_ key: String, of members: [String: AnyCodable]) -> AnyCodable? {
        members.exactIndex(forKey: key).map { members[$0].value }
    }

    /// JavaScript's `===` for JSON values: primitives by value (strings code point for code point, not
    /// by Swift's canonical equivalence; numbers numerically), distinct arrays and objects never.
    static func strictEquals(_ lhs: AnyCodable?, _ rhs: AnyCodable?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil), (.null?, .null?): return true
        case (.bool(let a)?, .bool(let b)?): return a == b
        case (.string(let a)?, .string(let b)?): return a.utf8.elementsEqual(b.utf8)
        case (.int(let a)?, .int(let b)?): return a == b
        default:
            if let a = lhs?.numberValue, let b = rhs?.numberValue { return a == b }
            return false
        }
    }

    /// `util/deep.ts equals`: structural equality, `===` on leaves, same key sets, arrays in order.
    static func deepEquals(_ lhs: AnyCodable?, _ rhs: AnyCodable?) -> Bool {
        switch (lhs, rhs) {
        case (.array(let a)?, .array(let b)?):
            return a.count == b.count && zip(a, b).allSatisfy { Self.deepEquals($0, $1) }
        case (.object(let a)?, .object(let b)?):
            guard a.count == b.count else { return false }
            for (key, value) in a {
                guard let other = Self.member(key, of: b), Self.deepEquals(value, other) else { return false }
            }
            return true
        default:
            return Self.strictEquals(lhs, rhs)
        }
    }

    /// `util/deep.ts contains`: whether `container` contains `contained`; `nil` where coaty-js throws.
    ///
    /// coaty-js throws (at `Object.keys(null)`) when it tests an object against `null`, at any depth.
    /// Arrays are searched in order and stop as JavaScript's `every`/`some` do, so a `null` found before
    /// an object is reached does not throw. The keys of an object operand have no order here (coaty-js
    /// takes them in wire order and stops at the first failing one), so if any key throws the result
    /// is `nil`.
    static func contains(_ container: AnyCodable?, _ contained: AnyCodable?, isTopLevel: Bool = true) -> Bool? {
        switch container {
        case .array(let elements)?:
            guard case .array(let wanted)? = contained else {
                if isTopLevel && !Self.isArrayOrObject(contained) {
                    return elements.contains { Self.strictEquals($0, contained) }
                }
                return false
            }
            // Many primitives looked up in a large array: hash the array's primitives once.
            let index = wanted.count >= 16 && elements.count >= 16 ? PrimitiveElementIndex(elements) : nil
            for item in wanted {
                switch index?.answer(for: item) ?? .needsSearch {
                case .found: continue
                case .notFound: return false
                case .throwsInCoatyJS: return nil
                case .needsSearch: break
                }
                var isFound = false
                for element in elements {
                    guard let result = Self.contains(element, item, isTopLevel: false) else { return nil }
                    if result {
                        isFound = true
                        break
                    }
                }
                if !isFound { return false }
            }
            return true
        case .object(let members)?:
            switch contained {
            case .null?:
                return nil
            case .object(let wanted)?:
                var result = true
                for (key, item) in wanted {
                    guard let member = Self.member(key, of: members) else {
                        result = false
                        continue
                    }
                    guard let isContained = Self.contains(member, item, isTopLevel: false) else { return nil }
                    result = result && isContained
                }
                return result
            case .array(let wanted)?:
                // Object.keys of an array are its indexes, in order.
                for (index, item) in wanted.enumerated() {
                    guard let member = members[String(index)] else { return false }
                    guard let isContained = Self.contains(member, item, isTopLevel: false) else { return nil }
                    if !isContained { return false }
                }
                return true
            default:
                return false
            }
        default:
            return Self.strictEquals(container, contained)
        }
    }

    /// Whether `value !== null && typeof value === "object"`.
    private static func isArrayOrObject(_ value: AnyCodable?) -> Bool {
        switch value {
        case .array?, .object?: true
        default: false
        }
    }

    /// `util/deep.ts includes`: whether `array` holds an element deep-equal to `value`; `nil` if `array`
    /// is not an array (coaty-js throws).
    static func includes(_ array: AnyCodable?, _ value: AnyCodable?) -> Bool? {
        guard case .array(let elements)? = array else { return nil }
        return elements.contains { Self.deepEquals($0, value) }
    }

    // MARK: Relational comparison

    /// The result of JavaScript's `lhs < rhs` (the abstract relational comparison): `nil` when it is
    /// `undefined` (a `NaN` is involved), so that every relational operator is `false`.
    ///
    /// Both values are first converted to primitives (arrays join their elements with `,`, objects
    /// become `"[object Object]"`); two strings compare by UTF-16 code units, anything else numerically.
    static func lessThan(_ lhs: AnyCodable?, _ rhs: AnyCodable?) -> Bool? {
        let a = Self.primitive(lhs)
        let b = Self.primitive(rhs)
        if case .string(let x)? = a, case .string(let y)? = b {
            return x.utf16.lexicographicallyPrecedes(y.utf16)
        }
        let x = Self.number(a)
        let y = Self.number(b)
        if x.isNaN || y.isNaN { return nil }
        return x < y
    }

    /// JavaScript's `lhs < rhs`, where two strings compare by ``FilterCollation`` as `ObjectMatcher` does.
    static func isLess(_ lhs: AnyCodable?, _ rhs: AnyCodable?) -> Bool {
        if case .string(let x)? = lhs, case .string(let y)? = rhs { return FilterCollation.compare(x, y) < 0 }
        return Self.lessThan(lhs, rhs) ?? false
    }

    /// JavaScript's `lhs <= rhs`, strings by collation.
    static func isLessOrEqual(_ lhs: AnyCodable?, _ rhs: AnyCodable?) -> Bool {
        if case .string(let x)? = lhs, case .string(let y)? = rhs { return FilterCollation.compare(x, y) <= 0 }
        return Self.lessThan(rhs, lhs).map { !$0 } ?? false
    }

    /// JavaScript's `lhs > rhs` (on values that are not both strings: plain JavaScript `>`).
    static func jsGreater(_ lhs: AnyCodable?, _ rhs: AnyCodable?) -> Bool {
        Self.lessThan(rhs, lhs) ?? false
    }

    private static func primitive(_ value: AnyCodable?) -> AnyCodable? {
        switch value {
        case .array?, .object?: .string(Self.string(value))
        default: value
        }
    }

    /// JavaScript's `String(value)` for JSON values.
    static func string(_ value: AnyCodable?) -> String {
        switch value {
        case nil: "undefined"
        case .null?: "null"
        case .bool(let flag)?: flag ? "true" : "false"
        case .int(let number)?: String(number)
        case .uint(let number)?: Self.numberString(Double(number))
        case .double(let number)?: Self.numberString(number)
        case .string(let text)?: text
        case .array(let elements)?:
            elements.map { element in element.isNull ? "" : Self.string(element) }.joined(separator: ",")
        case .object?: "[object Object]"
        }
    }

    /// JavaScript's `Number.prototype.toString()`: the shortest digits that round-trip (as Swift's
    /// `description` has them), positional for decimal exponents from -6 to 21, else `1.5e-7`/`1e+21`.
    private static func numberString(_ number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
        if number == 0 { return "0" }
        let sign = number < 0 ? "-" : ""
        // Swift writes "1.2345e-07", "1e+16", "0.001" or "123.5": split into digits and an exponent.
        let text = abs(number).description
        let mantissa = text.prefix { $0 != "e" }
        var exponent = text.contains("e") ? Int(text.drop { $0 != "e" }.dropFirst()) ?? 0 : 0
        let integerPart = mantissa.prefix { $0 != "." }
        let fractionPart = mantissa.drop { $0 != "." }.dropFirst()
        var digits = String(integerPart) + fractionPart
        exponent += integerPart.count
        while digits.hasPrefix("0") {
            digits.removeFirst()
            exponent -= 1
        }
        while digits.hasSuffix("0") { digits.removeLast() }
        // Now the value is 0.<digits> × 10^exponent.
        let count = digits.count
        let body: String
        if count <= exponent && exponent <= 21 {
            body = digits + String(repeating: "0", count: exponent - count)
        } else if 0 < exponent && exponent <= 21 {
            body = digits.prefix(exponent) + "." + digits.dropFirst(exponent)
        } else if -6 < exponent && exponent <= 0 {
            body = "0." + String(repeating: "0", count: -exponent) + digits
        } else {
            let power = exponent - 1
            let head = count == 1 ? digits : digits.prefix(1) + "." + digits.dropFirst()
            body = head + (power < 0 ? "e-" : "e+") + String(abs(power))
        }
        return sign + body
    }

    /// JavaScript's `Number(value)` for primitive JSON values.
    private static func number(_ value: AnyCodable?) -> Double {
        switch value {
        case nil: return .nan
        case .null?: return 0
        case .bool(let flag)?: return flag ? 1 : 0
        case .int(let number)?: return Double(number)
        case .uint(let number)?: return Double(number)
        case .double(let number)?: return number
        case .string(let text)?: return Self.number(parsing: text)
        case .array?, .object?: return Self.number(parsing: Self.string(value))
        }
    }

    private static func number(parsing text: String) -> Double {
        let trimmed = text.trimmingJavaScriptWhitespace()
        if trimmed.isEmpty { return 0 }
        switch trimmed {
        case "Infinity", "+Infinity": return .infinity
        case "-Infinity": return -.infinity
        default: break
        }
        let lowered = trimmed.lowercased()
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where lowered.hasPrefix(prefix) {
            return Int(lowered.dropFirst(2), radix: radix).map(Double.init) ?? .nan
        }
        guard trimmed.unicodeScalars.allSatisfy({ "0123456789+-.eE".unicodeScalars.contains($0) }) else {
            return .nan
        }
        return Double(trimmed) ?? .nan
    }

    // MARK: LIKE

    /// Whether `text` matches the SQL `LIKE` `pattern`, as coaty-js's anchored, flag-less regular
    /// expression does: over UTF-16 code units, `_` and `%` not matching line terminators.
    ///
    /// The matcher steps through the pattern's states for each code unit of the text, so its time is
    /// their product. The pattern may come from another agent (a Query's or a Call's filter), so runs of
    /// `%` count as one, and a pattern with more single-unit tokens than the text has units is refused
    /// before matching: a pattern of a million `%` or `_` against a 3,000-character name took 10–30 s.
    /// What is left is bounded by the square of the (local) text's length.
    static func like(_ text: String, pattern: String) -> Bool {
        let tokens = Self.likeTokens(pattern)
        let count = tokens.count
        let unitTokens = tokens.count { $0 != .anyRun }
        guard unitTokens <= text.utf16.count else { return false }
        var active = [Bool](repeating: false, count: count + 1)
        var next = active
        active[0] = true
        Self.closeOverAnyRuns(&active, tokens)
        for unit in text.utf16 {
            let isLineTerminator = unit == 0x0A || unit == 0x0D || unit == 0x2028 || unit == 0x2029
            for index in next.indices { next[index] = false }
            var anyActive = false
            for index in 0..<count where active[index] {
                switch tokens[index] {
                case .literal(let literal) where literal == unit:
                    next[index + 1] = true
                case .one where !isLineTerminator:
                    next[index + 1] = true
                case .anyRun where !isLineTerminator:
                    next[index] = true
                default:
                    continue
                }
                anyActive = true
            }
            if !anyActive { return false }
            swap(&active, &next)
            Self.closeOverAnyRuns(&active, tokens)
        }
        return active[count]
    }

    private enum LikeToken: Equatable {
        case literal(UInt16)
        case one
        case anyRun
    }

    private static func closeOverAnyRuns(_ states: inout [Bool], _ tokens: [LikeToken]) {
        for index in tokens.indices where states[index] && tokens[index] == .anyRun {
            states[index + 1] = true
        }
    }

    private static func likeTokens(_ pattern: String) -> [LikeToken] {
        var tokens: [LikeToken] = []
        var isEscaped = false
        for scalar in pattern.unicodeScalars {
            switch scalar {
            case "\\":
                if isEscaped {
                    tokens.append(.literal(0x5C))
                }
                isEscaped.toggle()
            case "_" where !isEscaped:
                tokens.append(.one)
            case "%" where !isEscaped:
                if tokens.last != .anyRun { tokens.append(.anyRun) }
            default:
                tokens.append(contentsOf: String(scalar).utf16.map(LikeToken.literal))
                isEscaped = false
            }
        }
        return tokens
    }
}

extension AnyCodable {
    /// The value as a JavaScript number if it is a number.
    var numberValue: Double? { self.doubleValue }
}

extension String {
    /// The string without leading and trailing JavaScript white space and line terminators.
    ///
    /// Those are Unicode's White_Space characters except U+0085 (NEXT LINE), plus U+FEFF.
    fileprivate func trimmingJavaScriptWhitespace() -> Substring {
        let isSpace: (Unicode.Scalar) -> Bool = {
            ($0.properties.isWhitespace && $0 != "\u{85}") || $0 == "\u{FEFF}"
        }
        let scalars = self.unicodeScalars
        guard let start = scalars.firstIndex(where: { !isSpace($0) }),
            let end = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return Substring(scalars[start...end])
    }
}
