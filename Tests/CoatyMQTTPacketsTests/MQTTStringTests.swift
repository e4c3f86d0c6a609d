import CoatyMQTTPackets
import Testing

struct MQTTStringTests {
    @Test(
        arguments: [
            ([0x61, 0x2F, 0x62], "a/b"),
            ([0xF0, 0xAA, 0x9B, 0x94], "\u{2A6D4}"),  // valid 4-byte character
            ([0xEF, 0xBB, 0xBF, 0x61], "\u{FEFF}a"),  // BOM is preserved, not stripped
            ([0xC3, 0xA9], "\u{E9}"),
            ([0xC2, 0xA0], "\u{A0}"),  // first code point after the C1 controls
            ([], ""),
        ] as [([UInt8], String)]
    )
    func validStringsDecode(bytes: [UInt8], expected: String) throws {
        let decoded = try MQTTString.decode(bytes[...])
        #expect(Array(decoded.utf8) == bytes)
        #expect(Array(decoded.utf8) == Array(expected.utf8))
    }

    @Test(
        arguments: [
            [0xED, 0xA0, 0x80],  // encoded surrogate U+D800
            [0xED, 0xBF, 0xBF],  // encoded surrogate U+DFFF
            [0xC0, 0x80],  // overlong U+0000
            [0xC1, 0xBF],  // overlong U+007F
            [0xE0, 0x80, 0xAF],  // overlong '/'
            [0xF0, 0x80, 0x80, 0xAF],  // overlong '/'
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0xFF], [0x80], [0xC3],  // invalid lead, lone continuation, truncated sequence
        ] as [[UInt8]]
    )
    func illFormedUTF8IsRejected(bytes: [UInt8]) {
        #expect(throws: MQTTDecodingError.invalidUTF8) { try MQTTString.decode(bytes[...]) }
    }

    @Test(
        arguments: [
            ([0x61, 0x00], 0x0000), ([0x01], 0x0001), ([0x1F], 0x001F), ([0x7F], 0x007F),
            ([0xC2, 0x80], 0x0080), ([0xC2, 0x9F], 0x009F), ([0xEF, 0xBF, 0xBF], 0xFFFF),
            ([0xEF, 0xBF, 0xBE], 0xFFFE), ([0xEF, 0xB7, 0x90], 0xFDD0), ([0xF4, 0x8F, 0xBF, 0xBF], 0x10FFFF),
        ] as [([UInt8], UInt32)]
    )
    func disallowedCodePointsAreRejected(bytes: [UInt8], codePoint: UInt32) {
        #expect(throws: MQTTDecodingError.disallowedCodePoint(codePoint)) { try MQTTString.decode(bytes[...]) }
    }

    @Test func encoderRefusesWhatTheDecoderRejects() {
        var buffer: [UInt8] = []
        #expect(throws: MQTTEncodingError.disallowedCodePoint(0)) { try MQTTString.encode("a\u{0}", into: &buffer) }
        #expect(throws: MQTTEncodingError.disallowedCodePoint(0x1B)) { try MQTTString.encode("\u{1B}", into: &buffer) }
        #expect(throws: MQTTEncodingError.fieldTooLong(65_536)) {
            try MQTTString.encode(String(repeating: "a", count: 65_536), into: &buffer)
        }
    }

    /// The ASCII fast path scans whole buffers at once: a disallowed byte is found wherever it sits
    /// in a long string, and the printable range's edges pass.
    @Test(arguments: [0, 31, 32, 63, 64, 99])
    func everyPositionOfALongASCIIStringIsChecked(position: Int) throws {
        for (byte, allowed) in [(0x00, false), (0x1F, false), (0x7F, false), (0x20, true), (0x7E, true)] {
            var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 100)
            bytes[position] = UInt8(byte)
            var buffer: [UInt8] = []
            let string = String(decoding: bytes, as: UTF8.self)
            if allowed {
                #expect(try MQTTString.decode(bytes[...]) == string)
                try MQTTString.encode(string, into: &buffer)
            } else {
                #expect(throws: MQTTDecodingError.disallowedCodePoint(UInt32(byte))) {
                    try MQTTString.decode(bytes[...])
                }
                #expect(throws: MQTTEncodingError.disallowedCodePoint(UInt32(byte))) {
                    try MQTTString.encode(string, into: &buffer)
                }
            }
        }
    }

    @Test func encodingWritesLengthPrefix() throws {
        var buffer: [UInt8] = []
        try MQTTString.encode("\u{FEFF}p", into: &buffer)
        #expect(buffer == hex("0004 EFBBBF 70"))
        var long: [UInt8] = []
        try MQTTString.encode(String(repeating: "x", count: 65_535), into: &long)
        #expect(long.prefix(2) == [0xFF, 0xFF])
        #expect(long.count == 65_537)
    }
}
