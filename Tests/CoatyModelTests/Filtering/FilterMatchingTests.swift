import CoatyModel
import FoundationEssentials
import Testing

/// The object and conditions of coaty-js's `src/test/spec/object.spec.ts` ("Object filters"), where every
/// condition matches.
struct FilterMatchingTests {
    static let specObjectJSON = #"""
        {"name":"TestObjectFilter","coreType":"CoatyObject","objectType":"coaty.CoatyObject",
         "objectId":"5e2ad3a5-6f1e-4b8c-9d3a-0f5c8e7b1a22","filterBoolean":true,"filterNumber":42,
         "filterString":"Abc","filterLikeString":"hello abc\\d_","filterLikeString1":".*+?^${}()|[]",
         "filterArray":[42,[43,44],[[45,46]]],"filterObject":{"foo":42,"bar":[42,43],"baz":{"mumble":[42,45]}},
         "filterObject1":{"foo":42}," ":"blank","":{"":{"":1}},".":{".":{".":2}}}
        """#

    static let specConditions: [FilterCondition] = {
        var conditions: [FilterCondition] = [
            .init([], .exists),
            .init("foo", .notExists),
            .init("foo.bar", .notExists),
            .init("filterUndefined", .notExists),
            .init("filterBoolean", .exists),
            .init("filterBoolean", .equals(true)),
            .init("filterBoolean", .notEquals(false)),
            .init("filterNumber", .equals(42)),
            .init("filterNumber", .notEquals(43)),
            .init("filterString", .equals("Abc")),
            .init("filterString", .notEquals("abc")),
            .init("filterArray", .equals([42, [43, 44], [[45, 46]]])),
            .init("filterArray", .notEquals([42, [43, 44], [[45, 47]]])),
            .init("filterObject", .equals(["foo": 42, "bar": [42, 43], "baz": ["mumble": [42, 45]]])),
            .init("filterObject", .notEquals(["foo": 42, "bar": [42, 43], "baz": ["mumble": [43, 45]]])),
            .init("filterObject.foo", .equals(42)),
            .init("filterObject.bar", .equals([42, 43])),
            .init("filterObject.baz", .equals(["mumble": [42, 45]])),
            .init("filterObject.baz.mumble", .equals([42, 45])),
            .init(" ", .equals("blank")),
            .init("", .equals(["": ["": 1]])),
            .init(".", .equals(["": 1])),
            .init("..", .equals(1)),
            .init(["."], .equals([".": [".": 2]])),
            .init([".", "."], .equals([".": 2])),
            .init([".", ".", "."], .equals(2)),
            .init("filterNumber", .lessThan(43)),
            .init("filterString", .lessThan("Abce")),
            .init("filterNumber", .lessThanOrEqual(42)),
            .init("filterString", .lessThanOrEqual("ABc")),
            .init("filterNumber", .greaterThan(41)),
            .init("filterString", .greaterThan("abc")),
            .init("filterNumber", .greaterThanOrEqual(42)),
            .init("filterString", .greaterThanOrEqual("Abc")),
            .init("filterNumber", .between(42, 42)),
            .init("filterNumber", .between(41, 43)),
            .init("filterNumber", .between(43, 41)),
            .init("filterString", .between("Abc", "Abc")),
            .init("filterString", .between("Abb", "Abd")),
            .init("filterString", .between("Abd", "Abb")),
            .init("filterNumber", .notBetween(43, 47)),
            .init("filterNumber", .notBetween(47, 43)),
            .init("filterNumber", .notBetween(41, 41)),
            .init("filterString", .notBetween("Abd", "Abf")),
            .init("filterString", .notBetween("Abf", "Abd")),
            .init("filterString", .notBetween("Abb", "Abb")),
        ]
        for pattern in [
            "Abc", "Ab_", "_b_", "___", "%", "%_", "%__", "%___", "_%_", "__%_", "_%", "__%", "___%", "A%bc", "A%c",
            "A%", "%c", "%%",
        ] {
            conditions.append(.init("filterString", .like(pattern)))
        }
        conditions += [
            .init("filterLikeString", .like(#"%a_c\\d\_"#)),
            .init("filterLikeString1", .like(".*+?^${}()|[]")),
            .init("filterArray", .contains(42)),
            .init("filterArray", .contains([42, [43], [[46]]])),
            .init("filterObject", .contains(["foo": 42, "bar": [42], "baz": ["mumble": [45]]])),
            .init("filterArray", .notContains(43)),
            .init("filterArray", .notContains([41, [45], [[43]]])),
            .init("filterObject", .notContains(["foo": 43])),
            .init("filterObject", .notContains(["bar": [44]])),
            .init("filterObject", .notContains(["baz": ["mumble": [43]]])),
            .init("filterObject", .notContains(["mumble": [45]])),
            .init("filterNumber", .in([43, 42, "42"])),
            .init("filterString", .in([43, 42, "Abc"])),
            .init("filterBoolean", .in([43, true, "Abc"])),
            .init("filterObject1", .in([["bar": 43], ["foo": 42]])),
            .init("filterNumber", .notIn([43, 41, "42"])),
            .init("filterString", .notIn([43, 42, "abc"])),
            .init("filterBoolean", .notIn([43, false, "Abc"])),
            .init("filterObject1", .notIn([["foo": 42, "bar": 43]])),
        ]
        return conditions
    }()

    @Test func specObjectMatchesAllConditionsCombinedByAndAndByOr() throws {
        let object = try parseJSON(Self.specObjectJSON)
        #expect(ContextFilter(conditions: .and(Self.specConditions)).matches(object))
        #expect(ContextFilter(conditions: .or(Self.specConditions)).matches(object))
        #expect(ObjectFilter(conditions: .and(Self.specConditions)).matches(object))
        #expect(ContextFilter().matches(object))
        #expect(ContextFilter(conditions: .all).matches(object))
        #expect(ContextFilter(conditions: .and([])).matches(object))
        #expect(!ContextFilter(conditions: .or([])).matches(object))
    }

    @Test(arguments: Self.specConditions.indices)
    func specConditionMatchesAloneAndItsNegationDoesNot(_ index: Int) throws {
        let object = try parseJSON(Self.specObjectJSON)
        let condition = Self.specConditions[index]
        #expect(ContextFilter(condition).matches(object))
        let negated: [FilterOperator: FilterOperator] = [
            .lessThan: .greaterThanOrEqual, .lessThanOrEqual: .greaterThan, .between: .notBetween,
            .equals: .notEquals, .exists: .notExists, .contains: .notContains, .in: .notIn,
        ]
        let pairs = negated.merging(negated.map { ($1, $0) }) { first, _ in first }
        if let opposite = pairs[condition.expression.operator] {
            var flipped = condition
            flipped.expression.operator = opposite
            #expect(!flipped.matches(object))
        }
    }

    /// A LIKE pattern may come from another agent: runs of `%` count as one, and a pattern needing more
    /// characters than the text has fails before matching, so a huge pattern costs no more than the text.
    @Test func likePatternsWithRunsOfWildcardsMatchAsShortOnes() {
        let object = CoatyObject(objectType: "com.example.Thing", name: "ab\ncd")
        func matches(_ pattern: String) -> Bool { ContextFilter(.init("name", .like(pattern))).matches(object) }
        #expect(!matches("%%%%"))  // % does not match a line terminator
        #expect(matches("ab_cd") == false)
        let named = CoatyObject(objectType: "com.example.Thing", name: "abcd")
        func matchesName(_ pattern: String) -> Bool { ContextFilter(.init("name", .like(pattern))).matches(named) }
        #expect(matchesName("%%%%"))
        #expect(matchesName("a%%%d"))
        #expect(matchesName(String(repeating: "%", count: 1_000_000) + "d"))
        #expect(matchesName("____"))
        #expect(!matchesName("_____"))
        #expect(!matchesName(String(repeating: "_", count: 1_000_000)))
        #expect(matchesName("%_%_%_%_%"))
        #expect(!matchesName("%_%_%_%_%_%"))
        #expect(matchesName(#"abc\%%"#) == false)  // an escaped % is a literal
        #expect(matchesName(#"%\%"#) == false)
    }

    @Test func coatyObjectsMatchThroughTheirWireForm() throws {
        let object = try decodeJSON(CoatyObject.self, Self.specObjectJSON)
        #expect(ContextFilter(conditions: .and(Self.specConditions)).matches(object))
        let value = try object.jsonValue
        #expect(value["objectId"] == "5e2ad3a5-6f1e-4b8c-9d3a-0f5c8e7b1a22")
        #expect(value["externalId"] == nil)
        #expect(ContextFilter(.init("objectType", .equals("coaty.CoatyObject"))).matches(object))
        #expect(ContextFilter(.init("externalId", .notExists)).matches(object))
        #expect(!ContextFilter(.init("name", .like("test%"))).matches(object))
    }

    @Test(
        arguments: [
            (["a": ["b": 1]], "a.b", 1),
            (["a": [10, 20, 30]], "a.1", 20),
            (["a": [10, 20, 30]], "a.length", 3),
            (["a": "text"], "a.length", nil),
            (["a": [10, 20]], "a.01", nil),
            (["a": [10, 20]], "a.2", nil),
            (["a": nil], "a.b", nil),
            (["a": nil], "a", .null),
            (["": ["": ["": 1]]], "..", 1),
        ] as [(AnyCodable, String, AnyCodable?)]
    )
    func propertyLookupWalksObjectsAndArraysLikeJavaScript(value: AnyCodable, path: String, expected: AnyCodable?) {
        let condition = FilterCondition(FilterProperty.dotted(path), expected.map { .equals($0) } ?? .notExists)
        #expect(condition.matches(value))
    }

    @Test func propertyForms() {
        #expect(FilterProperty.dotted("").segments == [""])
        #expect(FilterProperty.dotted("..").segments == ["", "", ""])
        #expect(FilterProperty.dotted("a.b").segments == ["a", "b"])
        #expect(FilterProperty.segments(["a.b"]).segments == ["a.b"])
        #expect(FilterProperty.segments([]).segments == [])
    }

    /// coaty-js compares strings with `===`, code unit by code unit; Swift's `==` would also equate
    /// canonically equivalent strings, so a precomposed `é` matched a query for `e` + U+0301.
    @Test func stringsAreEqualOnlyWithTheSameCodePoints() {
        let value: AnyCodable = ["name": "caf\u{E9}", "tags": ["caf\u{E9}"]]
        let decomposed: AnyCodable = "cafe\u{301}"
        #expect(!ContextFilter(.init("name", .equals(decomposed))).matches(value))
        #expect(ContextFilter(.init("name", .notEquals(decomposed))).matches(value))
        #expect(!ContextFilter(.init("name", .in([decomposed]))).matches(value))
        #expect(!ContextFilter(.init("tags", .contains(decomposed))).matches(value))
        #expect(ContextFilter(.init("name", .equals("caf\u{E9}"))).matches(value))
        // Property names and object members too: JavaScript finds a property by its exact name.
        #expect(!ContextFilter(.init("caf\u{E9}", .exists)).matches(["cafe\u{301}": 1]))
        #expect(!ContextFilter(.init("o", .equals(["cafe\u{301}": 1]))).matches(["o": ["caf\u{E9}": 1]]))
        #expect(!ContextFilter(.init("o", .contains(["cafe\u{301}": 1]))).matches(["o": ["caf\u{E9}": 1]]))
    }

    @Test func likeIsLinearEnoughForLongInputs() {
        let text = String(repeating: "a", count: 5000)
        #expect(!FilterCondition("p", .like(String(repeating: "%a", count: 50) + "b")).matches(["p": .string(text)]))
        #expect(FilterCondition("p", .like("%a%a%a")).matches(["p": .string(text)]))
    }
}
