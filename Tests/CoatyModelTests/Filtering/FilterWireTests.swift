import CoatyModel
import FoundationEssentials
import Testing

struct FilterWireTests {
    static let capturedQueryFilter = #"""
        {"conditions":{"and":[["floor",[4,6,8]],["name",[6,"Thing%"]],["externalId",[9]]]},"orderByProperties":[["name","Asc"],[["nested.prop","x"],"Desc"]],"skip":0,"take":10}
        """#

    @Test func capturedQueryFilterDecodesToTheSwiftForm() throws {
        let decoded = try decodeJSON(ObjectFilter.self, Self.capturedQueryFilter)
        let built = ObjectFilter(
            conditions: .and([
                .init("floor", .between(6, 8)),
                .init("name", .like("Thing%")),
                .init("externalId", .exists),
            ]),
            orderBy: [("name", .ascending), (["nested.prop", "x"], .descending)],
            skip: 0,
            take: 10
        )
        #expect(decoded == built)
        #expect(decoded.orderByProperties?[1].property.segments == ["nested.prop", "x"])
    }

    @Test(arguments: [
        Self.capturedQueryFilter,
        #"{"conditions":["floor",[4,6,8]]}"#,
        #"{"conditions":{"or":[["floor",[7,7]],["floor",[13,[8,9]]]]}}"#,
        #"{}"#,
        #"{"conditions":{}}"#,
        #"{"conditions":{"and":[]}}"#,
        #"{"conditions":[[],[9]]}"#,
        #"{"conditions":["a.b",[4,"x",[1],{"k":null},true,1.5]]}"#,
        #"{"orderByProperties":[],"skip":-1,"take":0}"#,
        #"{"orderByProperties":[["",  "Desc"]]}"#,
    ])
    func objectFilterRoundTripsExactly(_ json: String) throws {
        let filter = try decodeJSON(ObjectFilter.self, json)
        #expect(try encodeJSON(filter) == parseJSON(json))
    }

    @Test(arguments: [
        #"{"conditions":["floor",[4,6,8]]}"#,
        #"{"conditions":{"or":[["floor",[7,7]],["floor",[13,[8,9]]]]}}"#,
        #"{}"#,
    ])
    func contextFilterRoundTripsExactly(_ json: String) throws {
        let filter = try decodeJSON(ContextFilter.self, json)
        #expect(try encodeJSON(filter) == parseJSON(json))
    }

    @Test func callFiltersDecodeToTheSwiftForm() throws {
        #expect(
            try decodeJSON(ContextFilter.self, #"{"conditions":["floor",[4,6,8]]}"#)
                == ContextFilter(.init("floor", .between(6, 8)))
        )
        #expect(
            try decodeJSON(ContextFilter.self, #"{"conditions":{"or":[["floor",[7,7]],["floor",[13,[8,9]]]]}}"#)
                == ContextFilter(conditions: .or([.init("floor", .equals(7)), .init("floor", .in([8, 9]))]))
        )
    }

    @Test func encodingOmitsAbsentFields() throws {
        #expect(try encodeJSON(ObjectFilter()) == parseJSON("{}"))
        #expect(try encodeJSON(ContextFilter()) == parseJSON("{}"))
        #expect(try encodeJSON(ObjectFilter(take: 5)) == parseJSON(#"{"take":5}"#))
        #expect(
            try encodeJSON(ObjectJoinCondition(localProperty: "a", asProperty: "b"))
                == parseJSON(#"{"localProperty":"a","asProperty":"b"}"#)
        )
    }

    /// Rejections of coaty-js's `isObjectFilterValid`, plus the one deliberate restriction (integral
    /// `skip`/`take`). Each names the field and the reason.
    @Test(arguments: [
        (#"{"conditions":{"and":[["a",[9]]],"or":[["a",[9]]]}}"#, "conditions", "both"),
        (#"{"conditions":{"and":[],"or":[]}}"#, "conditions", "both"),
        (#"{"take":"10"}"#, "take", "must be a number"),
        (#"{"skip":null}"#, "skip", "must be a number"),
        (#"{"skip":1.5}"#, "skip", "must be an integer"),
        (#"{"conditions":["floor",4,6,8]}"#, "conditions", "flattened"),
        (#"{"conditions":["floor",[15]]}"#, "conditions.[1].[0]", "unknown operator"),
        (#"{"conditions":["floor",[-1]]}"#, "conditions.[1].[0]", "unknown operator"),
        (#"{"conditions":["floor",[1.5]]}"#, "conditions.[1].[0]", "unknown operator"),
        (#"{"conditions":["floor",["4"]]}"#, "conditions.[1].[0]", "must be a number"),
        (#"{"conditions":["floor",[]]}"#, "conditions.[1]", "must not be empty"),
        (#"{"conditions":["floor",4]}"#, "conditions.[1]", "must be an array"),
        (#"{"conditions":null}"#, "conditions", "found null"),
        (#"{"conditions":"floor"}"#, "conditions", "found a string"),
        (#"{"conditions":["",[9]]}"#, "conditions.[0]", "empty string"),
        (#"{"conditions":[["a",1],[9]]}"#, "conditions.[0].[1]", "must be strings"),
        (#"{"conditions":{"and":null}}"#, "conditions.and", "found null"),
        (#"{"conditions":{"or":{}}}"#, "conditions.or", "found an object"),
        (#"{"conditions":{"and":[["a",[9]],["b",9]]}}"#, "conditions.and.[1].[1]", "must be an array"),
        (#"{"orderByProperties":[["name","asc"]]}"#, "orderByProperties.[0].[1]", "\"Asc\" or \"Desc\""),
        (#"{"orderByProperties":[["name"]]}"#, "orderByProperties.[0]", "two-element"),
        (#"{"orderByProperties":"name"}"#, "orderByProperties", "must be an array"),
        (#"[]"#, "filter", "must be a JSON object"),
    ])
    func invalidObjectFiltersAreRejectedWithFieldAndReason(_ json: String, field: String, reason: String) throws {
        let error = try #require(throws: DecodingError.self) { try decodeJSON(ObjectFilter.self, json) }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(context.debugDescription.hasPrefix(field + ":"), "\(context.debugDescription)")
        #expect(context.debugDescription.contains(reason), "\(context.debugDescription)")
    }

    @Test func contextFilterRejectsBothAndAndOr() throws {
        #expect(throws: DecodingError.self) {
            try decodeJSON(ContextFilter.self, #"{"conditions":{"and":[["a",[9]]],"or":[["a",[9]]]}}"#)
        }
        #expect(throws: DecodingError.self) { try decodeJSON(ContextFilter.self, #"{"conditions":null}"#) }
        #expect(throws: DecodingError.self) { try decodeJSON(ContextFilter.self, #""x""#) }
    }

    @Test func joinConditionsRoundTripInBothForms() throws {
        let array = #"""
            [{"localProperty":"parentObjectId","asProperty":"parent","isOneToOneRelation":true},{"localProperty":"partIds","asProperty":"parts","isLocalPropertyArray":true}]
            """#
        let decoded = try decodeJSON(ObjectJoinConditions.self, array)
        #expect(
            decoded
                == .multiple([
                    ObjectJoinCondition(
                        localProperty: "parentObjectId",
                        asProperty: "parent",
                        isOneToOneRelation: true
                    ),
                    ObjectJoinCondition(localProperty: "partIds", asProperty: "parts", isLocalPropertyArray: true),
                ])
        )
        #expect(try encodeJSON(decoded) == parseJSON(array))
        let single = #"{"localProperty":"a","asProperty":"b","isLocalPropertyArray":false}"#
        let one = try decodeJSON(ObjectJoinConditions.self, single)
        #expect(one.conditions.count == 1)
        #expect(try encodeJSON(one) == parseJSON(single))
        #expect(try decodeJSON(ObjectJoinConditions.self, "[]") == .multiple([]))
    }

    @Test(arguments: [
        #"{"localProperty":1,"asProperty":"x"}"#,
        #"{"localProperty":"a"}"#,
        #"{"localProperty":"a","asProperty":"b","isOneToOneRelation":null}"#,
        #"{"localProperty":"a","asProperty":"b","isLocalPropertyArray":"true"}"#,
        #"[{"localProperty":"a","asProperty":"b"},7]"#,
        #""a""#,
    ])
    func invalidJoinConditionsAreRejected(_ json: String) {
        #expect(throws: DecodingError.self) { try decodeJSON(ObjectJoinConditions.self, json) }
    }

    /// Every filter in the coaty-js capture decodes, and re-encodes to the same JSON.
    @Test func capturedEventFiltersRoundTrip() throws {
        let capture = try String(
            contentsOfFile: packageRoot() + "/Tests/Fixtures/coaty-js/coaty-js-capture.jsonl",
            encoding: .utf8
        )
        var seen = 0
        for line in capture.split(separator: "\n") {
            guard case .string(let payload)? = try parseJSON(String(line))["payload"],
                case .object(let data) = (try? parseJSON(payload)) ?? .null
            else { continue }
            if let filter = data["objectFilter"] {
                let text = String(decoding: try JSONEncoder().encode(filter), as: UTF8.self)
                #expect(try encodeJSON(decodeJSON(ObjectFilter.self, text)) == filter)
                seen += 1
            }
            if let filter = data["filter"] {
                let text = String(decoding: try JSONEncoder().encode(filter), as: UTF8.self)
                #expect(try encodeJSON(decodeJSON(ContextFilter.self, text)) == filter)
                seen += 1
            }
            if let joins = data["objectJoinConditions"] {
                let text = String(decoding: try JSONEncoder().encode(joins), as: UTF8.self)
                #expect(try encodeJSON(decodeJSON(ObjectJoinConditions.self, text)) == joins)
                seen += 1
            }
        }
        #expect(seen == 4)
    }
}

/// The package root: the nearest ancestor of this file that contains Package.swift.
func packageRoot(file: String = #filePath) -> String {
    var url = URL(fileURLWithPath: file).deletingLastPathComponent()
    while url.path != "/" {
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
        url = url.deletingLastPathComponent()
    }
    return "."
}
