import CoatyModel
import Foundation
import Testing

struct DecodingDiagnosticsTests {
    /// Whether `body` creates no decoding errors. The count is scoped to this task, so errors that other
    /// tests create concurrently are not seen.
    func createsNoErrors(_ body: () throws -> Void) rethrows -> Bool {
        try DecodingDiagnostics.countingErrors(in: body).createdErrors == 0
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
        let (_, scoped) = DecodingDiagnostics.countingErrors {
            #expect(throws: DecodingError.self) { try ObjectFamily().decode(CoatyObject.self, from: bytes("{}")) }
        }
        #expect(scoped > 0)
        #expect(DecodingDiagnostics.createdErrorCount >= before + scoped)
    }

    @Test func scopesCountOnlyTheirOwnTask() async throws {
        // Another task keeps creating errors while this one decodes valid input: the scope sees none of them.
        let noisy = Task.detached {
            while !Task.isCancelled {
                _ = try? ObjectFamily().decode(CoatyObject.self, from: bytes("{}"))
                await Task.yield()
            }
        }
        defer { noisy.cancel() }
        let payload = bytes(
            #"{"objectType":"coaty.CoatyObject","coreType":"CoatyObject","objectId":"a8c5e57d-6d5c-4a1f-9e43-7e2e1b6f3d10","name":"x"}"#
        )
        let (_, created) = try DecodingDiagnostics.countingErrors {
            for _ in 0..<1_000 { _ = try ObjectFamily().decode(CoatyObject.self, from: payload) }
        }
        #expect(created == 0)
    }
}
