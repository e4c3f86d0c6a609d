import CoatyModel
import Foundation
import Testing

struct DecodingDiagnosticsTests {
    /// Runs `body` until one run sees no new decoding errors. Other tests create errors concurrently, so a
    /// single run may see theirs; a decoder that throws on valid input sees errors in every run.
    func createsNoErrors(_ body: () throws -> Void) rethrows -> Bool {
        for _ in 0..<50 {
            let before = DecodingDiagnostics.createdErrorCount
            try body()
            if DecodingDiagnostics.createdErrorCount == before { return true }
        }
        return false
    }

    @Test func validInputCreatesNoErrors() throws {
        let objects = try Fixtures.capturedObjects()
        let payloads = try objects.map {
            try CoatyJSONEncoder().encode(
                TestAdvertise(
                    object: CoatyJSONDecoder().decode(CoatyObject.self, fromValue: $0.json),
                    privateData: ["n": 1, "s": "x", "b": true, "d": 1.5, "a": [nil]]
                )
            )
        }
        let decoder = CoatyJSONDecoder(family: [Light.self])
        #expect(
            try self.createsNoErrors {
                for payload in payloads { _ = try decoder.decode(TestAdvertise.self, from: payload) }
            }
        )
    }

    @Test func foreignDecoderProbingIsDetected() throws {
        // Under JSONDecoder, AnyCodable must probe: a number is tried as a string first. The check sees it.
        let data = Array(#"{"n":1,"b":true}"#.utf8)
        #expect(
            try !self.createsNoErrors {
                _ = try JSONDecoder().decode([String: AnyCodable].self, from: Data(data))
            }
        )
    }

    @Test func invalidInputIsCounted() {
        let before = DecodingDiagnostics.createdErrorCount
        #expect(throws: DecodingError.self) { try ObjectFamily().decode(CoatyObject.self, from: bytes("{}")) }
        #expect(DecodingDiagnostics.createdErrorCount > before)
    }
}
