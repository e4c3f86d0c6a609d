import CoatyCore
import CoatyModel
import Testing

@testable import CoatyCommunication

/// Calls and Returns read and write their JSON directly (`WirePayload.decodeDirectly(_:)`,
/// `encodeDirectly(with:)`); each direct form must agree with the `Codable` one, and decline what
/// only the `Codable` one can judge.
struct DirectPayloadCodingTests {
    static let filter = ContextFilter(conditions: .and([.init("floor", .exists)]))
    static let filterJSON = String(decoding: try! CoatyJSONEncoder().encodeBytes(Self.filter), as: UTF8.self)

    static let callPayloads = [
        #"{}"#,
        #"{"parameters":{"name":"Ada","index":1000}}"#,
        #"{"parameters":[1,"two",null,{"b":true,"a":[]}]}"#,
        #"{"parameters":{},"extra":5}"#,
        #"{"parameters":{"x":1e300,"y":-0.5,"z":18446744073709551615}}"#,
        #"{"parameters":{"a":1},"filter":"# + Self.filterJSON + "}",
        #"{"parameters":"text"}"#,
        #"{"parameters":null}"#,
        #"{"parameters":5}"#,
        #"[]"#,
        #""parameters""#,
    ]

    static let returnPayloads = [
        #"{"result":"Hello, Ada!"}"#,
        #"{"result":null}"#,
        #"{"result":{"a":[1,2.5,"x"]},"executionInfo":{"duration":12}}"#,
        #"{"result":1,"executionInfo":null}"#,
        #"{"result":1,"unknown":{"z":1}}"#,
        #"{"error":{"code":-32602,"message":"Invalid params"},"executionInfo":[1]}"#,
        #"{"error":{"code":"weird","message":5}}"#,
        #"{"result":1,"error":{"code":1,"message":"m"}}"#,
        #"{"error":"boom"}"#,
        #"{}"#,
        #"[1]"#,
    ]

    /// Whatever the direct decoding accepts, it reads as `Codable` does; what `Codable` rejects, it
    /// declines.
    @Test(arguments: Self.callPayloads)
    func callDecodesDirectlyAsCodableDoes(_ json: String) throws {
        try Self.expectSameDecoding(CallEvent.Payload.self, json) { [$0.parameters, $0.filter] as [AnyHashable?] }
    }

    @Test(arguments: Self.returnPayloads)
    func returnDecodesDirectlyAsCodableDoes(_ json: String) throws {
        try Self.expectSameDecoding(ReturnEvent.Payload.self, json) {
            [$0.outcome, $0.executionInfo] as [AnyHashable?]
        }
    }

    /// The usual shapes do decode directly, so the tests above compare something; a Call with a
    /// context filter is declined but decodes.
    @Test func usualShapesDecodeDirectly() throws {
        let filtered = try AnyCodable(json: Self.callPayloads[5])
        #expect(CallEvent.Payload.decodeDirectly(filtered) == nil)
        #expect(try CoatyJSONDecoder().decode(CallEvent.Payload.self, fromValue: filtered).filter == Self.filter)
        #expect(CallEvent.Payload.decodeDirectly(try AnyCodable(json: Self.callPayloads[1])) != nil)
        #expect(ReturnEvent.Payload.decodeDirectly(try AnyCodable(json: Self.returnPayloads[0])) != nil)
        #expect(ReturnEvent.Payload.decodeDirectly(try AnyCodable(json: Self.returnPayloads[2])) != nil)
    }

    /// The direct encoding writes the very bytes `Codable` writes; payloads it declines (a context
    /// filter, an error) are still encoded.
    @Test func directEncodingWritesWhatCodableWrites() throws {
        let filter = Self.filter
        let parameters: [AnyCodable?] = [nil, ["name": "Ada", "index": 1_000], [1, "two", .null], [:], ["x": 0.1]]
        var direct = 0
        for value in parameters {
            for context in [nil, filter] {
                direct += try Self.expectSameEncoding(CallEvent.Payload(parameters: value, filter: context))
            }
        }
        let outcomes: [ReturnEvent.Outcome] = [
            .result("Hello, Ada!"), .result(.null), .result(["b": [1, 2], "a": true]),
            .error(RemoteCallError(code: -32602, message: "Invalid params")),
        ]
        for outcome in outcomes {
            for info in [nil, ["duration": 12] as AnyCodable, .null] {
                direct += try Self.expectSameEncoding(ReturnEvent.Payload(outcome: outcome, executionInfo: info))
            }
        }
        #expect(direct == 5 + 9)
    }

    /// A number JSON cannot hold fails the direct encoding with an error, as it fails `Codable`'s.
    @Test func nonFiniteNumberFailsBothWays() {
        let payload = CallEvent.Payload(parameters: ["x": .double(.infinity)], filter: nil)
        #expect(throws: EncodingError.self) { try payload.encodeDirectly(with: CoatyJSONEncoder()) }
        #expect(throws: EncodingError.self) { try CoatyJSONEncoder().encodeBytes(payload) }
        #expect(throws: CommunicationError.self) { try EventCoding.encode(payload) }
    }

    /// Compares the direct decoding of `json` with `Codable`'s, through `key`; returns nothing, records.
    static func expectSameDecoding<Payload: WirePayload, Key: Equatable>(
        _ type: Payload.Type,
        _ json: String,
        _ key: (Payload) -> Key
    ) throws {
        let tree = try AnyCodable(json: json)
        let codable = try? CoatyJSONDecoder().decode(Payload.self, fromValue: tree)
        let direct = Payload.decodeDirectly(tree)
        if let direct {
            let codable = try #require(codable, "\(json) decodes directly but not with Codable")
            #expect(key(direct) == key(codable), "\(json)")
        }
        // Through the path events take: the same verdict.
        let viaEventCoding = try? EventCoding.decode(Payload.self, from: Array(json.utf8), family: ObjectFamily())
        #expect((viaEventCoding == nil) == (codable == nil), "\(json)")
        if let viaEventCoding, let codable { #expect(key(viaEventCoding) == key(codable), "\(json)") }
    }

    /// Compares both encodings of `payload`; returns 1 if the direct one took it, else 0.
    static func expectSameEncoding<Payload: WirePayload>(_ payload: Payload) throws -> Int {
        let encoder = CoatyJSONEncoder()
        let codable = try encoder.encodeBytes(payload)
        #expect(try EventCoding.encode(payload) == codable)
        guard let direct = try payload.encodeDirectly(with: encoder) else { return 0 }
        #expect(
            direct == codable,
            "\(String(decoding: direct, as: UTF8.self)) ≠ \(String(decoding: codable, as: UTF8.self))"
        )
        return 1
    }
}
