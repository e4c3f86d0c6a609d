import CoatyMQTTPackets
import Testing

struct MQTTRemainingLengthTests {
    @Test(arguments: [
        (0, "00"), (127, "7F"), (128, "80 01"), (16_383, "FF 7F"), (16_384, "80 80 01"),
        (2_097_151, "FF FF 7F"), (2_097_152, "80 80 80 01"), (268_435_455, "FF FF FF 7F"),
    ])
    func boundaryValuesEncodeMinimallyAndDecode(value: Int, encoding: String) throws {
        var buffer: [UInt8] = []
        try MQTTRemainingLength.encode(value, into: &buffer)
        #expect(buffer == hex(encoding))
        #expect(MQTTRemainingLength.byteCount(for: value) == buffer.count)
        let decoded = try #require(try MQTTRemainingLength.decode(buffer))
        #expect(decoded.value == value)
        #expect(decoded.byteCount == buffer.count)
    }

    @Test(arguments: [268_435_456, Int.max, -1])
    func encoderRefusesValuesOutOfRange(value: Int) {
        var buffer: [UInt8] = []
        #expect(throws: MQTTEncodingError.packetTooLarge(value)) {
            try MQTTRemainingLength.encode(value, into: &buffer)
        }
        #expect(buffer.isEmpty)
    }

    @Test(arguments: ["FF FF FF FF 7F", "80 80 80 80", "FF FF FF FF"])
    func fifthByteIsMalformed(bytes: String) {
        #expect(throws: MQTTDecodingError.malformedRemainingLength) {
            try MQTTRemainingLength.decode(hex(bytes))
        }
    }

    @Test(arguments: ["", "80", "FF FF", "FF FF FF"])
    func incompleteLengthNeedsMoreBytes(bytes: String) throws {
        #expect(try MQTTRemainingLength.decode(hex(bytes)) == nil)
    }

    @Test func everyValueUpTo70000RoundTrips() throws {
        var buffer: [UInt8] = []
        for value in 0...70_000 {
            buffer.removeAll(keepingCapacity: true)
            try MQTTRemainingLength.encode(value, into: &buffer)
            let decoded = try #require(try MQTTRemainingLength.decode(buffer))
            #expect(decoded.value == value && decoded.byteCount == buffer.count)
        }
    }
}
