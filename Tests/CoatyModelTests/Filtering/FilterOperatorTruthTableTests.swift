import CoatyModel
import Testing

/// One row of an operator truth table: a property value (or `nil` for a missing property), an
/// expression `[operator, operands…]` and the result of coaty-js's `ObjectMatcher` (2.4.1) for it.
struct OperatorCase: CustomTestStringConvertible, Sendable {
    let expression: String
    let value: String?
    let expected: Bool

    init(_ expression: String, _ value: String?, _ expected: Bool) {
        self.expression = expression
        self.value = value
        self.expected = expected
    }

    var testDescription: String { "\(self.value ?? "missing") \(self.expression) → \(self.expected)" }
}

struct FilterOperatorTruthTableTests {
    /// Each row was cross-checked against coaty-js 2.4.1's `ObjectMatcher` and `util/deep.ts` running on
    /// Node.js 20 (ICU 78.2).
    static let cases: [OperatorCase] = [
        OperatorCase(#"[0, 43]"#, #"42"#, true),
        OperatorCase(#"[0, 42]"#, #"42"#, false),
        OperatorCase(#"[0, 41]"#, #"42"#, false),
        OperatorCase(#"[0, "Abce"]"#, #""Abc""#, true),
        OperatorCase(#"[0, "Abc"]"#, #""abc""#, true),
        OperatorCase(#"[0, "abc"]"#, #""Abc""#, false),
        OperatorCase(#"[0, "B"]"#, #""a""#, true),
        OperatorCase(#"[0, "9"]"#, #""10""#, true),
        OperatorCase(#"[0, "43"]"#, #"42"#, true),
        OperatorCase(#"[0, 43]"#, #""42""#, true),
        OperatorCase(#"[0, 2]"#, #"true"#, true),
        OperatorCase(#"[0, 1]"#, #"null"#, true),
        OperatorCase(#"[0]"#, #"42"#, false),
        OperatorCase(#"[0, 6]"#, #"[5]"#, true),
        OperatorCase(#"[0, 1]"#, #"{}"#, false),
        OperatorCase(#"[0, "B"]"#, #""b""#, true),
        OperatorCase(#"[0, 2]"#, #"1.5"#, true),
        OperatorCase(#"[0, "x"]"#, #"1"#, false),
        OperatorCase(#"[0, 5]"#, #""\u00851""#, false),
        // Arrays compare as their JavaScript strings, numbers formatted by Number.prototype.toString.
        OperatorCase(#"[0, "1e-7"]"#, #"[1e-7]"#, false),
        OperatorCase(#"[3, "1e-7"]"#, #"[1e-7]"#, true),
        OperatorCase(#"[0, "0.000002"]"#, #"[0.000001]"#, true),
        OperatorCase(#"[1, "100000000000000000000"]"#, #"[1e20]"#, true),
        OperatorCase(#"[3, "-1.2345e-7"]"#, #"[-1.2345e-7]"#, true),
        OperatorCase(#"[1, "1.5e+300"]"#, #"[1.5e300]"#, true),
        OperatorCase(#"[3, 1]"#, #""\u00a01\ufeff""#, true),
        OperatorCase(#"[1, 42]"#, #"42"#, true),
        OperatorCase(#"[1, "ABc"]"#, #""Abc""#, true),
        OperatorCase(#"[1, "Abc"]"#, #""ABc""#, false),
        OperatorCase(#"[1, 42]"#, #"43"#, false),
        OperatorCase(#"[1, 0]"#, #"null"#, true),
        OperatorCase(#"[1, 1]"#, #""x""#, false),
        OperatorCase(#"[1, "b"]"#, #"[1]"#, true),
        OperatorCase(#"[2, 41]"#, #"42"#, true),
        OperatorCase(#"[2, "abc"]"#, #""Abc""#, true),
        OperatorCase(#"[2, 42]"#, #"42"#, false),
        OperatorCase(#"[2, "B"]"#, #""a""#, false),
        OperatorCase(#"[2, false]"#, #"true"#, true),
        OperatorCase(#"[3, 42]"#, #"42"#, true),
        OperatorCase(#"[3, "Abc"]"#, #""Abc""#, true),
        OperatorCase(#"[3, 42]"#, #"41"#, false),
        OperatorCase(#"[3, "abc"]"#, #""ABC""#, true),
        OperatorCase(#"[4, 42, 42]"#, #"42"#, true),
        OperatorCase(#"[4, 41, 43]"#, #"42"#, true),
        OperatorCase(#"[4, 43, 41]"#, #"42"#, true),
        OperatorCase(#"[4, 43, 47]"#, #"42"#, false),
        OperatorCase(#"[4, "Abb", "Abd"]"#, #""Abc""#, true),
        OperatorCase(#"[4, "Abd", "Abb"]"#, #""Abc""#, true),
        OperatorCase(#"[4, "abc", "ABC"]"#, #""Abc""#, true),
        OperatorCase(#"[4, "ABC", "abc"]"#, #""Abc""#, true),
        OperatorCase(#"[4, "40", 50]"#, #"42"#, true),
        OperatorCase(#"[4, 41]"#, #"42"#, false),
        OperatorCase(#"[4, 5]"#, #"0"#, false),
        OperatorCase(#"[4, 5]"#, #""""#, false),
        OperatorCase(#"[4, 5, null]"#, #"0"#, true),
        OperatorCase(#"[4, 6, 8]"#, #"8.5"#, false),
        OperatorCase(#"[4, "a", "c"]"#, #""B""#, true),
        OperatorCase(#"[5, 43, 47]"#, #"42"#, true),
        OperatorCase(#"[5, 47, 43]"#, #"42"#, true),
        OperatorCase(#"[5, 41, 41]"#, #"42"#, true),
        OperatorCase(#"[5, 41, 43]"#, #"42"#, false),
        OperatorCase(#"[5, 41]"#, #"42"#, false),
        OperatorCase(#"[5, 5]"#, #"0"#, true),
        OperatorCase(#"[5, 5, null]"#, #"0"#, false),
        OperatorCase(#"[5, "Abd", "Abf"]"#, #""Abc""#, true),
        OperatorCase(#"[5, "Abf", "Abd"]"#, #""Abc""#, true),
        OperatorCase(#"[5, "Abb", "Abb"]"#, #""Abc""#, true),
        OperatorCase(#"[5, "Abb", "Abd"]"#, #""Abc""#, false),
        OperatorCase(#"[5, "a", "c"]"#, #""B""#, false),
        OperatorCase(#"[6, "Abc"]"#, #""Abc""#, true),
        OperatorCase(#"[6, "Ab_"]"#, #""Abc""#, true),
        OperatorCase(#"[6, "abc"]"#, #""Abc""#, false),
        OperatorCase(#"[6, "A%"]"#, #""Abc""#, true),
        OperatorCase(#"[6, "%c"]"#, #""Abc""#, true),
        OperatorCase(#"[6, "%%"]"#, #""Abc""#, true),
        OperatorCase(#"[6, "A_"]"#, #""Abc""#, false),
        OperatorCase(#"[6, "%b"]"#, #""Abc""#, false),
        OperatorCase(#"[6, ""]"#, #""""#, true),
        OperatorCase(#"[6, "%"]"#, #""""#, true),
        OperatorCase(#"[6, "_"]"#, #""""#, false),
        OperatorCase(#"[6, "a.c"]"#, #""abc""#, false),
        OperatorCase(#"[6, "42"]"#, #"42"#, false),
        OperatorCase(#"[6, 42]"#, #""42""#, false),
        OperatorCase(#"[6]"#, #""x""#, false),
        OperatorCase(#"[6, "%a_c\\\\d\\_"]"#, #""hello abc\\d_""#, true),
        OperatorCase(#"[6, ".*+?^${}()|[]"]"#, #"".*+?^${}()|[]""#, true),
        OperatorCase(#"[6, "a%b"]"#, #""a\nb""#, false),
        OperatorCase(#"[6, "a_b"]"#, #""a\nb""#, false),
        OperatorCase(#"[6, "a%b"]"#, #""a\u2028b""#, false),
        OperatorCase(#"[6, "50\\%"]"#, #""50%""#, true),
        OperatorCase(#"[6, "50\\%"]"#, #""500""#, false),
        OperatorCase(#"[6, "_"]"#, #""😀""#, false),
        OperatorCase(#"[6, "__"]"#, #""😀""#, true),
        OperatorCase(#"[6, "a\\b"]"#, #""ab""#, true),
        OperatorCase(#"[6, "a\\"]"#, #""a""#, true),
        OperatorCase(#"[6, "a\\\\"]"#, #""a\\""#, true),
        OperatorCase(#"[6, "%a%a%a%b"]"#, #""aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa""#, false),
        OperatorCase(#"[6, "%Bc"]"#, #""aBc""#, true),
        OperatorCase(#"[7, 42]"#, #"42"#, true),
        OperatorCase(#"[7, 42.0]"#, #"42"#, true),
        OperatorCase(#"[7, "42"]"#, #"42"#, false),
        OperatorCase(#"[7, [1, [2]]]"#, #"[1, [2]]"#, true),
        OperatorCase(#"[7, [2, 1]]"#, #"[1, 2]"#, false),
        OperatorCase(#"[7, {"b": [2], "a": 1}]"#, #"{"a": 1, "b": [2]}"#, true),
        OperatorCase(#"[7, {"a": 1, "b": 2}]"#, #"{"a": 1}"#, false),
        OperatorCase(#"[7, {"x": 5, "y": 6}]"#, #"{"x": 5, "y": [6]}"#, false),
        OperatorCase(#"[7, null]"#, #"null"#, true),
        OperatorCase(#"[7, true]"#, #"true"#, true),
        OperatorCase(#"[7]"#, #"42"#, false),
        OperatorCase(#"[7, "abc"]"#, #""Abc""#, false),
        OperatorCase(#"[7, {}]"#, #"[]"#, false),
        OperatorCase(#"[8, 43]"#, #"42"#, true),
        OperatorCase(#"[8, "abc"]"#, #""Abc""#, true),
        OperatorCase(#"[8, [1]]"#, #"[1]"#, false),
        OperatorCase(#"[8]"#, #"42"#, true),
        OperatorCase(#"[8, null]"#, #"0"#, true),
        OperatorCase(#"[9]"#, #"42"#, true),
        OperatorCase(#"[9]"#, #"null"#, true),
        OperatorCase(#"[9]"#, nil, false),
        OperatorCase(#"[10]"#, nil, true),
        OperatorCase(#"[10]"#, #"null"#, false),
        OperatorCase(#"[10]"#, #"0"#, false),
        OperatorCase(#"[11, 42]"#, #"[42, [43, 44], [[45, 46]]]"#, true),
        OperatorCase(#"[11, [42, [43], [[46]]]]"#, #"[42, [43, 44], [[45, 46]]]"#, true),
        OperatorCase(#"[11, []]"#, #"[1, 2, 3]"#, true),
        OperatorCase(#"[11, [3, 1, 3, 1]]"#, #"[1, 2, 3]"#, true),
        OperatorCase(#"[11, [3, 1, 5]]"#, #"[1, 2, 3]"#, false),
        OperatorCase(#"[11, [3, [3, 2]]]"#, #"[1, [2, 3, 4], 3]"#, true),
        OperatorCase(#"[11, [3, [3, 1]]]"#, #"[1, [2, 3, 4], 3]"#, false),
        OperatorCase(#"[11, {"bar": 2}]"#, #"{"foo": 1, "bar": 2}"#, true),
        OperatorCase(#"[11, {"bar": 2, "foo": 1}]"#, #"{"foo": 1, "bar": 2}"#, true),
        OperatorCase(#"[11, {"bar": 2, "foo": 2}]"#, #"{"foo": 1, "bar": 2}"#, false),
        OperatorCase(#"[11, {"foo": {}}]"#, #"{"foo": {"bar": "baz"}}"#, true),
        OperatorCase(#"[11, {"bar": "baz"}]"#, #"{"foo": {"bar": "baz"}}"#, false),
        OperatorCase(#"[11, [{"foo": [{"bar": [3]}]}]]"#, #"[1, {"foo": [{"bar": [1, 2, 3]}, 2, 3]}]"#, true),
        OperatorCase(#"[11, "foo"]"#, #""foo""#, true),
        OperatorCase(#"[11, "foo"]"#, #""foobar""#, false),
        OperatorCase(#"[11, 2]"#, #"[1, [2]]"#, false),
        OperatorCase(#"[11, [1]]"#, #"{"0": 1}"#, true),
        OperatorCase(#"[11, null]"#, #"[null]"#, true),
        OperatorCase(#"[11]"#, #"42"#, false),
        OperatorCase(
            #"[11, {"foo": 42, "bar": [42], "baz": {"mumble": [45]}}]"#,
            #"{"foo": 42, "bar": [42, 43], "baz": {"mumble": [42, 45]}}"#,
            true
        ),
        OperatorCase(#"[11, {}]"#, #"42"#, false),
        OperatorCase(#"[11, 42.0]"#, #"[42]"#, true),
        OperatorCase(#"[12, 43]"#, #"[42, [43, 44], [[45, 46]]]"#, true),
        OperatorCase(#"[12, {"mumble": [45]}]"#, #"{"foo": 42, "bar": [42, 43], "baz": {"mumble": [42, 45]}}"#, true),
        OperatorCase(#"[12, 1]"#, #"[1, 2]"#, false),
        OperatorCase(#"[12, [41, [45], [[43]]]]"#, #"[42, [43, 44], [[45, 46]]]"#, true),
        OperatorCase(#"[13, [43, 42, "42"]]"#, #"42"#, true),
        OperatorCase(#"[13, [42]]"#, #""42""#, false),
        OperatorCase(#"[13, [{"bar": 43}, {"foo": 42}]]"#, #"{"foo": 42}"#, true),
        OperatorCase(#"[13, [{"foo": 47, "bar": 42}]]"#, #"{"foo": 47}"#, false),
        OperatorCase(#"[13, [[1]]]"#, #"[1]"#, true),
        OperatorCase(#"[13, []]"#, #"42"#, false),
        OperatorCase(#"[13, [43, true, "Abc"]]"#, #"true"#, true),
        OperatorCase(#"[14, [43, 41, "42"]]"#, #"42"#, true),
        OperatorCase(#"[14, [42]]"#, #"42"#, false),
        OperatorCase(#"[14, [43, 42, "abc"]]"#, #""Abc""#, true),
        OperatorCase(#"[14, [{"foo": 42, "bar": 43}]]"#, #"{"foo": 42}"#, true),
        OperatorCase(#"[14, []]"#, #"42"#, true),
    ]

    @Test(arguments: Self.cases)
    func operatorMatchesLikeCoatyJS(_ row: OperatorCase) throws {
        let expression = try decodeJSON(FilterExpression.self, row.expression)
        var members: [String: AnyCodable] = ["other": 1]
        if let value = row.value { members["p"] = try parseJSON(value) }
        let condition = FilterCondition("p", expression)
        #expect(condition.matches(.object(members)) == row.expected)
        // The same condition through the filter types and the wire.
        let filter = try decodeJSON(ContextFilter.self, #"{"conditions":["p",\#(row.expression)]}"#)
        #expect(filter.matches(.object(members)) == row.expected)
    }

    @Test(arguments: FilterOperator.allCases)
    func missingPropertyMatchesOnlyNotExists(_ filterOperator: FilterOperator) {
        for operands: [AnyCodable] in [[], [nil], [1, 2], [[1, 2]], ["%"]] {
            let condition = FilterCondition("absent.path", FilterExpression(filterOperator, operands))
            #expect(condition.matches(["present": 1]) == (filterOperator == .notExists))
        }
    }

    @Test(arguments: FilterOperator.allCases)
    func wireCodesAreTheEnumIndexes(_ filterOperator: FilterOperator) throws {
        let names = [
            "lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual", "between", "notBetween", "like",
            "equals", "notEquals", "exists", "notExists", "contains", "notContains", "in", "notIn",
        ]
        #expect(names[filterOperator.rawValue] == "\(filterOperator)")
        #expect(try encodeJSON(FilterExpression(filterOperator)) == .array([.int(filterOperator.rawValue)]))
    }

    /// Where coaty-js throws a `TypeError` while matching, nothing matches.
    @Test func operandsThatMakeCoatyJSThrowMatchNothing() throws {
        #expect(!FilterCondition("p", FilterExpression(.in, [42])).matches(["p": 42]))
        #expect(!FilterCondition("p", FilterExpression(.notIn, [42])).matches(["p": 42]))
        #expect(!FilterCondition("p", FilterExpression(.in)).matches(["p": 42]))
        #expect(!FilterCondition("p", .contains(nil)).matches(["p": ["a": 1]]))
        // Also the negated operators, and a `null` met inside arrays or objects: coaty-js's `contains`
        // throws at `Object.keys(null)` whenever it tests an object against `null`.
        #expect(!FilterCondition("p", .notContains(nil)).matches(["p": ["a": 1]]))
        #expect(!FilterCondition("p", .notContains([nil])).matches(["p": [["a": 1]]]))
        #expect(!FilterCondition("p", .notContains(["a": nil])).matches(["p": ["a": ["b": 1]]]))
        #expect(!FilterCondition("p", .contains([nil])).matches(["p": [["a": 1], nil]]))
        // `some` stops at the first element that contains the operand, before reaching the object.
        #expect(FilterCondition("p", .contains([nil])).matches(["p": [nil, ["a": 1]]]))
        // No object is tested against `null` here.
        #expect(FilterCondition("p", .notContains(["b": nil])).matches(["p": ["a": 1]]))
        #expect(FilterCondition("p", .notContains(nil)).matches(["p": [["a": 1]]]))
    }

    @Test func factoriesBuildTheWireExpressions() throws {
        #expect(try encodeJSON(FilterExpression.between(6, 8)) == parseJSON("[4,6,8]"))
        #expect(try encodeJSON(FilterExpression.like("Thing%")) == parseJSON(#"[6,"Thing%"]"#))
        #expect(try encodeJSON(FilterExpression.exists) == parseJSON("[9]"))
        #expect(try encodeJSON(FilterExpression.notExists) == parseJSON("[10]"))
        #expect(try encodeJSON(FilterExpression.in([1, "a"])) == parseJSON(#"[13,[1,"a"]]"#))
        #expect(try encodeJSON(FilterExpression.notIn([])) == parseJSON("[14,[]]"))
        #expect(try encodeJSON(FilterExpression.lessThan(1)) == parseJSON("[0,1]"))
        #expect(try encodeJSON(FilterExpression.greaterThanOrEqual("b")) == parseJSON(#"[3,"b"]"#))
        #expect(try encodeJSON(FilterExpression.contains(["a": [1]])) == parseJSON(#"[11,{"a":[1]}]"#))
    }
}
