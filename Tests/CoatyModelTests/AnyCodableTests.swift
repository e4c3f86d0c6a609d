import CoatyModel
import Foundation
import Testing

struct AnyCodableTests {
    static let parseCases: [(String, AnyCodable)] = [
        ("1", AnyCodable.int(1)),
        ("-0", .int(0)),
        ("1.5", .double(1.5)),
        ("1e3", .int(1000)),
        ("1.0", .int(1)),
        ("-0.0", .int(0)),
        ("1e19", .uint(10_000_000_000_000_000_000)),
        ("true", .bool(true)),
        ("null", .null),
        (#""a\/b\u00e9\ud83d\ude00""#, .string("a/bé😀")),
        ("[1,1.5,true,null]", [1, 1.5, true, nil]),
        (#"{"a":{"b":[]}}"#, ["a": ["b": []]]),
        ("9223372036854775808", .uint(9_223_372_036_854_775_808)),
        ("18446744073709551615", .uint(.max)),
        ("18446744073709551616", .double(18_446_744_073_709_551_616)),
        ("-9223372036854775809", .double(-0x1p63)),
        ("2.50e1", .int(25)),
        ("9223372036854775807.5", .double(0x1p63)),
    ]

    @Test(arguments: Self.parseCases)
    func parsesEachKindExactly(_ json: String, _ expected: AnyCodable) throws {
        #expect(try AnyCodable(json: json) == expected)
    }

    @Test(arguments: [
        "", "01", "1.", "-", "[1,]", "{\"a\"}", "tru", "\"\u{01}\"", "\"\\ud800\"", "[1] x", "{'a':1}", "NaN",
    ])
    func rejectsInvalidJSON(_ json: String) {
        #expect(throws: DecodingError.self) { try AnyCodable(json: json) }
    }

    /// Strings are checked as UTF-8 unless every byte is ASCII: raw multi-byte characters are taken,
    /// malformed sequences are refused, with or without escapes in the same string.
    @Test func stringsMustBeValidUTF8() throws {
        let quote = UInt8(ascii: "\"")
        #expect(try AnyCodable(json: [quote] + Array("plain ascii".utf8) + [quote]) == "plain ascii")
        #expect(try AnyCodable(json: [quote] + Array("é😀".utf8) + [quote]) == "é😀")
        #expect(try AnyCodable(json: [quote] + Array("é\\n".utf8) + [quote]) == "é\n")
        for malformed: [UInt8] in [[0xFF], [0xC3], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0x61, 0x80]] {
            #expect(throws: DecodingError.self) { try AnyCodable(json: [quote] + malformed + [quote]) }
            #expect(throws: DecodingError.self) {
                try AnyCodable(json: [quote] + malformed + Array("\\n".utf8) + [quote])
            }
        }
    }

    /// A number too large for `Double` would parse as an infinity that no encoder can write back (JSON
    /// has no infinities): a peer's `1e400` in Call parameters made the decoded event impossible to
    /// re-encode. It is refused as out of range; a tiny number still rounds to zero, as in JavaScript.
    @Test(arguments: ["1e400", "-1e400", "[1,-1e040055]", #"{"a":123456789e999}"#])
    func refusesNumbersOutOfDoubleRange(_ json: String) {
        #expect(throws: DecodingError.self) { try AnyCodable(json: json) }
    }

    /// A number within `Double`'s range can still be beyond `Float`'s: narrowing it made a `Float` field
    /// an infinity, which the encoder then refused to write back. It is refused as `JSONDecoder` refuses
    /// it, in every kind of container; the largest `Float` itself still decodes.
    @Test(arguments: ["1e39", "-3.5e38", "1e300"])
    func refusesNumbersOutOfFloatRangeForFloats(_ number: String) throws {
        struct Reading: Decodable { let value: Float }
        let decoder = CoatyJSONDecoder()
        #expect(throws: DecodingError.self) { try decoder.decode(Float.self, from: Array(number.utf8)) }
        #expect(throws: DecodingError.self) { try decoder.decode([Float].self, from: Array("[\(number)]".utf8)) }
        #expect(throws: DecodingError.self) {
            try decoder.decode(Reading.self, from: Array(#"{"value":\#(number)}"#.utf8))
        }
        #expect(throws: DecodingError.self) { try AnyCodable(json: number).decode(Float.self) }
        #expect(try decoder.decode(Float.self, from: Array("3.4028235e38".utf8)) == .greatestFiniteMagnitude)
    }

    @Test func numbersThatUnderflowRoundToZero() throws {
        #expect(try AnyCodable(json: "1e-400") == .double(0))
        #expect(try AnyCodable(json: "1.7976931348623157e308") == .double(.greatestFiniteMagnitude))
    }

    /// Swift's `Dictionary` treats canonically equivalent keys (`é` and `e` + U+0301) as one, where
    /// JavaScript keeps two properties: such an object would silently lose a member, so it is refused.
    /// A key repeated exactly still keeps its last value, as `JSON.parse` does.
    @Test func refusesKeysThatDifferOnlyInNormalization() throws {
        #expect(throws: DecodingError.self) { try AnyCodable(json: #"{"caf\u00e9":1,"cafe\u0301":2}"#) }
        #expect(throws: DecodingError.self) { try AnyCodable(json: "{\"cafe\u{301}\":1,\"caf\u{E9}\":2}") }
        #expect(try AnyCodable(json: #"{"caf\u00e9":1,"caf\u00e9":2}"#) == ["caf\u{E9}": 2])
        #expect(try AnyCodable(json: #"{"a":1,"b":2,"a":3}"#) == ["a": 3, "b": 2])
    }

    @Test func rejectsDeepNestingWithoutCrashing() throws {
        #expect(throws: DecodingError.self) { try AnyCodable(json: String(repeating: "[", count: 1_000_000)) }
        #expect(throws: DecodingError.self) { try AnyCodable(json: Array("[[[1]]]".utf8), maximumDepth: 2) }
        // A caller cannot raise the limit past 512: 50,000 levels overflowed the stack.
        let deep = String(repeating: "[", count: 50_000) + String(repeating: "]", count: 50_000)
        #expect(throws: DecodingError.self) { try AnyCodable(json: Array(deep.utf8), maximumDepth: 100_000) }
        #expect(throws: DecodingError.self) {
            try CoatyJSONDecoder(maximumDepth: 100_000).decode(AnyCodable.self, from: Array(deep.utf8))
        }
        let fits = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        _ = try AnyCodable(json: Array(fits.utf8), maximumDepth: 100_000)
    }

    /// Swift normalises a string to hash or compare it, in time quadratic in a run of combining marks
    /// of alternating classes; Unicode's stream-safe limit of 30 such marks in a row keeps that linear.
    @Test func stringsWithMoreThan30CombiningMarksInARowAreRefused() throws {
        let marks = { (count: Int) in String(repeating: "\u{301}\u{316}", count: count / 2) }
        let accepted = "e" + marks(30) + " and ü, 😀, 中文, \u{1F1E9}\u{1F1EA}"
        #expect(try AnyCodable(json: Array(#"{"k":"\#(accepted)"}"#.utf8)) == ["k": .string(accepted)])
        for json in [
            #""x\#(marks(32))""#,  // a value
            #"{"a\#(marks(80_000))":1}"#,  // a key of 320 KB, which took over a minute to hash
            #""\u0061\#(marks(32))""#,  // with an escape, through the other path
            #""a\#(String(repeating: "\\u0301", count: 31))""#,  // marks written as escapes
        ] {
            #expect(throws: DecodingError.self) { try AnyCodable(json: Array(json.utf8)) }
        }
    }

    static let sample: AnyCodable = [
        "int": 1, "double": 1.5, "bool": true, "null": nil, "string": "a/b",
        "array": [1, "two", [3.25]], "object": ["nested": ["deep": false]], "big": .int(Int.max), "negative": -7,
    ]

    @Test func roundTripsThroughTheCoatyCoders() throws {
        let data = try CoatyJSONEncoder().encode(Self.sample)
        #expect(!String(decoding: data, as: UTF8.self).contains(#"\/"#))
        #expect(try CoatyJSONDecoder().decode(AnyCodable.self, from: data) == Self.sample)
    }

    @Test func roundTripsThroughFoundationCoders() throws {
        let data = try JSONEncoder().encode(Self.sample)
        #expect(try JSONDecoder().decode(AnyCodable.self, from: data) == Self.sample)
    }

    @Test func typedAccessors() throws {
        let value = Self.sample
        #expect(value["int"]?.intValue == 1)
        #expect(value["int"]?.doubleValue == 1.0)
        #expect(value["double"]?.intValue == nil)
        #expect(value["bool"]?.boolValue == true)
        #expect(value["null"]?.isNull == true)
        #expect(value["string"]?.stringValue == "a/b")
        #expect(value["array"]?[1]?.stringValue == "two")
        #expect(value["array"]?[9] == nil)
        #expect(value["object"]?["nested"]?["deep"]?.boolValue == false)
        #expect(value["missing"] == nil)
        #expect(value.objectValue?.count == 9)
        #expect(value["array"]?.arrayValue?.count == 3)
    }

    @Test func hashable() {
        let set: Set<AnyCodable> = [1, 1, "1", 1.0, true]
        #expect(set.count == 4)
    }

    struct Parameters: Codable, Equatable {
        let color: String
        let luminosity: Double
    }

    @Test func convertsToAndFromTypedValues() throws {
        let parameters: AnyCodable = ["color": "red", "luminosity": 0.75]
        #expect(try parameters.decode(Parameters.self) == Parameters(color: "red", luminosity: 0.75))
        #expect(try AnyCodable(encoding: Parameters(color: "red", luminosity: 0.75)) == parameters)
        #expect(throws: DecodingError.self) { try (["color": 1] as AnyCodable).decode(Parameters.self) }
        #expect((["a": "b/c"] as AnyCodable).jsonString == #"{"a":"b/c"}"#)
    }
}

struct CoatyJSONEncoderTests {
    @Test func absentOptionalsAreOmittedAndEnumsAreNumbers() throws {
        let task = CoatyTask(
            objectID: ObjectID(UUID(uuidString: "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE")!),
            name: "t",
            status: .done,
            creatorID: "c",
            creationTimestamp: 1_700_000_000_000.5,
            duration: 20
        )
        let json = try AnyCodable(json: CoatyJSONEncoder().encode(task))
        #expect(
            json == [
                "objectId": "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", "objectType": "coaty.Task", "coreType": "Task",
                "name": "t", "status": 2, "creatorId": "c", "creationTimestamp": 1_700_000_000_000.5, "duration": 20,
            ]
        )
        let text = String(decoding: try CoatyJSONEncoder().encode(task), as: UTF8.self)
        #expect(!text.contains("null"))
    }

    @Test func randomIDsAreLowerCaseVersion4UUIDs() {
        let ids = (0..<1_000).map { _ in ObjectID.random() }
        for id in ids {
            let characters = Array(id.rawValue)
            #expect(id.rawValue == id.uuid?.uuidString.lowercased())
            #expect(characters[14] == "4", "version: \(id)")
            #expect("89ab".contains(characters[19]), "variant: \(id)")
        }
        #expect(Set(ids).count == ids.count)
        // Every hex digit turns up in every free position of the text.
        let free = (0..<36).filter { ![8, 13, 18, 23, 14, 19].contains($0) }
        for position in free {
            let digits = Set(ids.map { Array($0.rawValue)[position] })
            #expect(digits == Set("0123456789abcdef"), "position \(position)")
        }
    }

    @Test func logLevelsAreTheCoatyNumbers() {
        #expect(LogLevel.allCases.map(\.rawValue) == [10, 20, 30, 40, 50])
        #expect(TaskStatus.allCases.map(\.rawValue) == Array(0...6))
        #expect(AnnotationType.allCases.map(\.rawValue) == Array(0...7))
        #expect(AnnotationStatus.allCases.map(\.rawValue) == Array(0...3))
        #expect(IOSourceUpdateStrategy.allCases.map(\.rawValue) == Array(0...3))
    }

    @Test func customPropertiesNeverOverrideDeclaredFields() throws {
        let object = CoatyObject(name: "n", customProperties: ["objectId": "evil", "extra": [1]])
        let json = try AnyCodable(json: CoatyJSONEncoder().encode(object))
        #expect(json["objectId"] == .string(object.objectID.rawValue))
        #expect(json["extra"] == [1])
    }

    @Test func encodesEventsWithNestedObjects() throws {
        let log = Log(
            name: "Requester",
            logLevel: .info,
            logMessage: "hello",
            logDate: "2026-11-22T08:03:55.602Z",
            logTags: ["golden"],
            logHost: .init(pid: 20108)
        )
        let event = TestAdvertise(object: log, privateData: ["reason": "golden"])
        let data = try CoatyJSONEncoder().encode(event)
        let decoded = try CoatyJSONDecoder().decode(TestAdvertise.self, from: data)
        let roundTripped = try #require(decoded.object as? Log)
        #expect(roundTripped.logHost?.pid == 20108)
        #expect(decoded.privateData == ["reason": "golden"])
        #expect(try AnyCodable(json: CoatyJSONEncoder().encode(decoded)) == AnyCodable(json: data))
    }
}
