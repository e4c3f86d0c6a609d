import CoatyModel
import Foundation
import Testing

/// Integers beyond `Int64` decode exactly, as with Foundation's `JSONDecoder`, and
/// `AnyCodable` reads the same text into the same value under either decoder.
struct LargeIntegerTests {
    struct Counter: Codable, Equatable {
        let value: UInt64
    }

    @Test(arguments: [UInt64(1) << 63, (UInt64(1) << 63) + 1, UInt64.max - 1, .max])
    func unsignedIntegersAboveInt64DecodeExactly(_ value: UInt64) throws {
        let json = Array(#"{"value":\#(value)}"#.utf8)
        #expect(try CoatyJSONDecoder().decode(Counter.self, from: json) == Counter(value: value))
        #expect(try JSONDecoder().decode(Counter.self, from: Data(json)) == Counter(value: value))
        // What we write, we read back.
        let written = try CoatyJSONEncoder().encode(Counter(value: value))
        #expect(try CoatyJSONDecoder().decode(Counter.self, from: written) == Counter(value: value))
        #expect(try AnyCodable(json: written)["value"] == .uint(value))
        #expect(try AnyCodable(json: written).jsonString == #"{"value":\#(value)}"#)
    }

    @Test func integersBeyondUInt64AreRefusedForIntegerTypes() throws {
        #expect(throws: DecodingError.self) {
            try CoatyJSONDecoder().decode(Counter.self, from: Array(#"{"value":18446744073709551616}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try CoatyJSONDecoder().decode(Counter.self, from: Array(#"{"value":-1}"#.utf8))
        }
        #expect(try CoatyJSONDecoder().decode(Double.self, from: Array("18446744073709551615".utf8)) == 0x1p64)
    }

    /// The same text decodes to the same `AnyCodable` under our decoder and Foundation's (which cannot
    /// tell `1.0` from `1`; JavaScript cannot either).
    @Test(arguments: [
        "1", "1.0", "-0.0", "1e3", "1.5", "0.1", "-7", "9223372036854775807", "9223372036854775808",
        "18446744073709551615", "18446744073709551616", "1e19", "1e300", "-9223372036854775808", "2.50e1",
        "9223372036854775807.5",
    ])
    func anyCodableAgreesWithFoundationsDecoder(_ number: String) throws {
        let ours = try CoatyJSONDecoder().decode(AnyCodable.self, from: Array("[\(number)]".utf8))
        let foundation = try JSONDecoder().decode(AnyCodable.self, from: Data("[\(number)]".utf8))
        #expect(ours == foundation)
    }
}
