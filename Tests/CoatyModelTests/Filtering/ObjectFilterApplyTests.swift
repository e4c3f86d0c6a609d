import CoatyModel
import Testing

struct ObjectFilterApplyTests {
    static let things: [AnyCodable] = [
        ["name": "Thing 3", "floor": 7, "on": true],
        ["name": "thing 1", "floor": 6, "on": false],
        ["name": "Thing 2", "floor": 8],
        ["name": "Lamp", "floor": 7, "on": true],
        ["name": "Thing 10", "floor": 9, "on": false],
        ["name": "thing 1", "floor": 5.5],
    ]

    static func names(_ values: [AnyCodable]) -> [String] {
        values.compactMap { $0["name"]?.stringValue }
    }

    @Test func matchSortSkipTake() {
        let filter = ObjectFilter(
            conditions: .and([.init("floor", .between(6, 9)), .init("name", .like("_hing%"))]),
            orderBy: [("name", .ascending)],
            skip: 1,
            take: 2
        )
        // Matches: Thing 3, thing 1, Thing 2, Thing 10; collated: thing 1 < Thing 10 < Thing 2 < Thing 3.
        #expect(Self.names(filter.apply(to: Self.things)) == ["Thing 10", "Thing 2"])
    }

    @Test func descendingReversesAndLaterPropertiesBreakTies() {
        let filter = ObjectFilter(orderBy: [("floor", .descending), ("name", .ascending)])
        #expect(
            Self.names(filter.apply(to: Self.things)) == [
                "Thing 10", "Thing 2", "Lamp", "Thing 3", "thing 1", "thing 1",
            ]
        )
        #expect(filter.apply(to: Self.things).last?["floor"] == 5.5)
    }

    @Test func missingValuesComeFirstAscendingAndBooleansFalseFirst() {
        let ascending = ObjectFilter(orderBy: [("on", .ascending)]).apply(to: Self.things)
        #expect(Self.names(ascending) == ["Thing 2", "thing 1", "thing 1", "Thing 10", "Thing 3", "Lamp"])
        let descending = ObjectFilter(orderBy: [("on", .descending)]).apply(to: Self.things)
        #expect(Self.names(descending) == ["Thing 3", "Lamp", "thing 1", "Thing 10", "Thing 2", "thing 1"])
    }

    /// Integers above 2^53 compared exactly with each other but through `Double` with a double, so
    /// 2^53 + 1 tied with the double 2^53, which tied with the integer 2^53, yet sorted after it: not a
    /// strict weak ordering, and the sort left 2^53 + 1 ahead of 2^53. Numbers now compare exactly
    /// whatever their kind (the same as JavaScript for every number it holds exactly).
    @Test func mixedIntegersAndDoublesSortConsistently() {
        let values: [AnyCodable] = [
            ["n": .int(9_007_199_254_740_993)], ["n": .double(9_007_199_254_740_992)],
            ["n": .int(9_007_199_254_740_992)],
        ]
        let sorted = ObjectFilter(orderBy: [("n", .ascending)]).apply(to: values)
        #expect(sorted == [values[1], values[2], values[0]])
        let descending = ObjectFilter(orderBy: [("n", .descending)]).apply(to: values)
        #expect(descending == [values[0], values[1], values[2]])
        let mixed: [AnyCodable] = [
            ["n": 2.5], ["n": 2], ["n": -1e300], ["n": .int(Int.max)], ["n": 9.3e18], ["n": .int(Int.min)],
        ]
        #expect(
            ObjectFilter(orderBy: [("n", .ascending)]).apply(to: mixed) == [
                mixed[2], mixed[5], mixed[1], mixed[0], mixed[3], mixed[4],
            ]
        )
        // NaN cannot come from JSON, but a program can build it: it sorts after every number, and
        // comparing it with an integer does not trap.
        let withNaN: [AnyCodable] = [["n": .double(.nan)], ["n": 1], ["n": .double(.infinity)], ["n": 0.5]]
        #expect(
            ObjectFilter(orderBy: [("n", .ascending)]).apply(to: withNaN).map { $0["n"]?.doubleValue ?? 0 }.dropLast()
                == [0.5, 1, .infinity]
        )
        #expect(ObjectFilter(orderBy: [("n", .ascending)]).apply(to: withNaN).last?["n"]?.doubleValue?.isNaN == true)
    }

    /// Rows checked against coaty-js 2.4.1's in-memory adapter (`findObjects`) on Node.js: it yields the
    /// matches whose index minus `skip` lies in `0..<take`, so a negative `skip` shortens a `take`.
    @Test(
        arguments: [
            (nil, nil, 6),
            (0, 0, 6),
            (nil, 0, 6),
            (2, nil, 4),
            (-3, 2, 0),
            (-1, 3, 2),
            (-10, 12, 2),
            (-2, nil, 6),
            (-1, -1, 0),
            (5, 10, 1),
            (7, nil, 0),
            (0, -1, 0),
            (0, 3, 3),
        ] as [(Int?, Int?, Int)]
    )
    func skipAndTakeFollowTheInMemoryAdapter(skip: Int?, take: Int?, count: Int) {
        let filter = ObjectFilter(skip: skip, take: take)
        let result = filter.apply(to: Self.things)
        #expect(result.count == count)
        #expect(result == Array(Self.things.dropFirst(max(skip ?? 0, 0)).prefix(count)))
    }

    @Test func mixedTypesOrderByTypeAndStably() {
        let values: [AnyCodable] = [
            ["v": "b"], ["v": 2], ["w": 0], ["v": nil], ["v": true], ["v": [1]], ["v": 1], ["v": "a"],
        ]
        let sorted = ObjectFilter(orderBy: [("v", .ascending)]).apply(to: values)
        #expect(sorted.map { $0["v"] } == [nil, .null, true, 1, 2, "a", "b", [1]])
    }

    @Test func coatyObjectsAreFilteredThroughTheirWireForm() {
        let objects = [
            CoatyObject(name: "b", customProperties: ["floor": 2]),
            CoatyObject(name: "A", customProperties: ["floor": 1]),
            CoatyObject(name: "a", externalID: "x", customProperties: ["floor": 3]),
        ]
        let filter = ObjectFilter(conditions: .single(.init("floor", .greaterThan(1))), orderBy: [("name", .ascending)])
        #expect(filter.apply(to: objects).map(\.name) == ["a", "b"])
        let byExternal = ObjectFilter(conditions: .single(.init("externalId", .exists)))
        #expect(byExternal.apply(to: objects).map(\.name) == ["a"])
    }
}

struct ObjectJoinConditionTests {
    static let parts: [AnyCodable] = [
        ["objectId": "p1", "name": "wheel"],
        ["objectId": "p2", "name": "axle"],
        ["objectId": "p1", "name": "duplicate wheel"],
    ]

    @Test func oneToOneAttachesTheFirstRelatedObjectOrRemovesTheProperty() {
        let join = ObjectJoinCondition(localProperty: "partId", asProperty: "part", isOneToOneRelation: true)
        let joined = join.resolve(in: ["partId": "p1", "part": 0], related: Self.parts, relatedProperty: "objectId")
        #expect(joined["part"]?["name"] == "wheel")
        let none = join.resolve(in: ["partId": "p9", "part": 0], related: Self.parts, relatedProperty: "objectId")
        #expect(none["part"] == nil)
        #expect(none["partId"] == "p9")
    }

    /// Property names are found code point for code point, as filters find them: a name that is only
    /// canonically equivalent (composed against decomposed é) is another property.
    @Test func propertiesAreFoundCodePointForCodePoint() {
        let join = ObjectJoinCondition(localProperty: "caf\u{E9}", asProperty: "parts")
        let joined = join.resolve(in: ["cafe\u{301}": "p1"], related: Self.parts, relatedProperty: "objectId")
        #expect(joined["parts"] == [])
        let related: [AnyCodable] = [["ob\u{E9}": "p1"]]
        let byRelated = ObjectJoinCondition(localProperty: "partId", asProperty: "parts")
            .resolve(in: ["partId": "p1"], related: related, relatedProperty: "obe\u{301}")
        #expect(byRelated["parts"] == [])
    }

    @Test func oneToManyAttachesAllRelatedObjects() {
        let join = ObjectJoinCondition(localProperty: "partId", asProperty: "parts")
        let joined = join.resolve(in: ["partId": "p1"], related: Self.parts, relatedProperty: "objectId")
        #expect(joined["parts"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["wheel", "duplicate wheel"])
        let missing = join.resolve(in: ["other": 1], related: Self.parts, relatedProperty: "objectId")
        #expect(missing["parts"] == [])
    }

    @Test func localPropertyArraysRelateEachElement() {
        let join = ObjectJoinCondition(
            localProperty: "partIds",
            asProperty: "parts",
            isLocalPropertyArray: true,
            isOneToOneRelation: true
        )
        let joined = join.resolve(
            in: ["partIds": ["p2", "p1", "p7"]],
            related: Self.parts,
            relatedProperty: "objectId"
        )
        #expect(joined["parts"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["axle", "wheel"])
        let notArray = join.resolve(in: ["partIds": "p1"], related: Self.parts, relatedProperty: "objectId")
        #expect(notArray["parts"] == [])
        #expect(join.resolve(in: 5, related: Self.parts, relatedProperty: "objectId") == 5)
    }
}
