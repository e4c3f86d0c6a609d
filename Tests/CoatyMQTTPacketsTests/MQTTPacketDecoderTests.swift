import CoatyMQTTPackets
import Testing

struct MQTTPacketDecoderTests {
    static let stream: [MQTTPacket] = [
        .connect(MQTTConnectPacket(clientID: "v3.1.1 PINGREQ C0 valid")),
        .subscribe(
            MQTTSubscribePacket(packetID: 0x1234, subscriptions: [MQTTSubscription(filter: "p", qos: .exactlyOnce)])
        ),
        .publish(MQTTPublishPacket(topic: "p", payload: Array("message".utf8), qos: .exactlyOnce, packetID: 1)),
        .publish(MQTTPublishPacket(topic: "large", payload: (0..<20_000).map { UInt8(truncatingIfNeeded: $0) })),
        .pubrel(1), .pingreq, .puback(9), .publish(MQTTPublishPacket(topic: "empty", payload: [])), .disconnect,
    ]

    static func encodedStream() throws -> [UInt8] {
        var bytes: [UInt8] = []
        for packet in stream { try packet.encode(into: &bytes) }
        return bytes
    }

    /// Feeds `bytes` in chunks of `chunkSize`, draining after each chunk.
    static func decodeAll(_ bytes: [UInt8], chunkSize: Int) throws -> [MQTTPacket] {
        var decoder = MQTTPacketDecoder(maximumPacketSize: 1 << 20)
        var packets: [MQTTPacket] = []
        var index = 0
        while index < bytes.count {
            let end = min(index + chunkSize, bytes.count)
            decoder.append(bytes[index..<end])
            index = end
            while let packet = try decoder.next() { packets.append(packet) }
        }
        #expect(decoder.bufferedByteCount == 0)
        return packets
    }

    @Test(arguments: [1, 2, 3, 7, 100, 4096, 1 << 20])
    func chunkedInputYieldsEveryPacketInOrder(chunkSize: Int) throws {
        #expect(try Self.decodeAll(Self.encodedStream(), chunkSize: chunkSize) == Self.stream)
    }

    @Test func severalPacketsInOneChunk() throws {
        var decoder = MQTTPacketDecoder(maximumPacketSize: 1024)
        decoder.append(hex("C0 00 40 02 0001 D0 00 E0"))
        #expect(try decoder.next() == .pingreq)
        #expect(try decoder.next() == .puback(1))
        #expect(try decoder.next() == .pingresp)
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 1)
        decoder.append([0x00])
        #expect(try decoder.next() == .disconnect)
        #expect(try decoder.next() == nil)
    }

    @Test func partialPacketReturnsNilUntilComplete() throws {
        let bytes = hex("34 0C 0001 70 0001 6d657373616765")
        var decoder = MQTTPacketDecoder()
        for byte in bytes.dropLast() {
            decoder.append([byte])
            #expect(try decoder.next() == nil)
        }
        decoder.append([bytes[bytes.count - 1]])
        let expected = MQTTPublishPacket(topic: "p", payload: Array("message".utf8), qos: .exactlyOnce, packetID: 1)
        #expect(try decoder.next() == .publish(expected))
    }

    @Test func oversizedPacketIsRejectedFromTheHeaderAlone() throws {
        var decoder = MQTTPacketDecoder(maximumPacketSize: 1000)
        // PUBLISH declaring 998 bytes of body: 1 + 2 + 998 = 1001 bytes in all. No body is sent.
        decoder.append([0x30, 0xE6])
        #expect(try decoder.next() == nil)  // length incomplete
        decoder.append([0x07])
        #expect(throws: MQTTDecodingError.packetTooLarge(1001)) { try decoder.next() }
        #expect(decoder.bufferedByteCount == 0)
        // The error is sticky and further input is dropped.
        decoder.append(Array(repeating: 0, count: 10_000))
        #expect(decoder.bufferedByteCount == 0)
        #expect(throws: MQTTDecodingError.packetTooLarge(1001)) { try decoder.next() }
        #expect(decoder.error == .packetTooLarge(1001))
    }

    @Test func packetOfExactlyTheMaximumSizeIsAccepted() throws {
        var decoder = MQTTPacketDecoder(maximumPacketSize: 1000)
        let publish = MQTTPacket.publish(MQTTPublishPacket(topic: "p", payload: Array(repeating: 1, count: 994)))
        let bytes = try publish.encoded()
        #expect(bytes.count == 1000)
        decoder.append(bytes)
        #expect(try decoder.next() == publish)
    }

    @Test func headerErrorsAreReportedBeforeTheBody() throws {
        var decoder = MQTTPacketDecoder()
        decoder.append([0x10, 0xFF, 0xFF, 0xFF, 0xFF])  // 5-byte remaining length
        #expect(throws: MQTTDecodingError.malformedRemainingLength) { try decoder.next() }

        var flags = MQTTPacketDecoder()
        flags.append([0x62])  // PUBREL flags must be 0010: this is right, so more bytes are needed
        #expect(try flags.next() == nil)
        var badFlags = MQTTPacketDecoder()
        badFlags.append([0x60])
        #expect(throws: MQTTDecodingError.invalidFlags) { try badFlags.next() }

        var longPing = MQTTPacketDecoder()
        longPing.append([0xC0, 0x80, 0x80, 0x01])  // PINGREQ announcing 16 KiB of body
        #expect(throws: MQTTDecodingError.invalidRemainingLength(.pingreq, 16_384)) { try longPing.next() }
    }

    @Test func validPacketsBeforeAnErrorAreDelivered() throws {
        var decoder = MQTTPacketDecoder()
        decoder.append(hex("C0 00 C0 00 C1 00"))
        #expect(try decoder.next() == .pingreq)
        #expect(try decoder.next() == .pingreq)
        #expect(throws: MQTTDecodingError.invalidFlags) { try decoder.next() }
    }

    @Test func manySmallPacketsInOneChunkAreNotShiftedPerPacket() throws {
        var bytes: [UInt8] = []
        for id in 1...200_000 {
            try MQTTPacket.puback(UInt16(truncatingIfNeeded: id % 65_535 + 1)).encode(into: &bytes)
        }
        var decoder = MQTTPacketDecoder()
        decoder.append(bytes)
        var count = 0
        while try decoder.next() != nil { count += 1 }
        #expect(count == 200_000)
        #expect(decoder.bufferedByteCount == 0)
        // Removing each packet from the front would move ~80 GB; a read index moves nothing.
        #expect(decoder.compactedByteCount == 0)
    }

    @Test func compactionMovesNoMoreThanWasConsumed() throws {
        // Odd-sized chunks of a stream of mixed packets: compaction happens, but stays linear.
        let stream = try Self.encodedStream()
        var repeated: [UInt8] = []
        for _ in 0..<50 { repeated += stream }
        var decoder = MQTTPacketDecoder()
        var index = 0
        var count = 0
        while index < repeated.count {
            let end = min(index + 1_499, repeated.count)
            decoder.append(repeated[index..<end])
            index = end
            while try decoder.next() != nil { count += 1 }
        }
        #expect(count == 50 * Self.stream.count)
        #expect(decoder.compactedByteCount > 0)
        #expect(decoder.compactedByteCount <= repeated.count)
    }

    @Test func nextPacketTypeIsKnownFromTheFirstByte() throws {
        var decoder = MQTTPacketDecoder()
        #expect(decoder.nextPacketType == nil)
        decoder.append([0x30])
        #expect(decoder.nextPacketType == .publish)
        #expect(try decoder.next() == nil)
        var invalid = MQTTPacketDecoder()
        invalid.append([0xF0])
        #expect(invalid.nextPacketType == nil)
        #expect(throws: MQTTDecodingError.invalidPacketType(15)) { try invalid.next() }
    }

    @Test func interleavedAppendAndNextKeepsBufferSmall() throws {
        let packet = try MQTTPacket.publish(MQTTPublishPacket(topic: "t", payload: Array(repeating: 3, count: 1000)))
            .encoded()
        var stream: [UInt8] = []
        for _ in 0..<2000 { stream += packet }
        var decoder = MQTTPacketDecoder(maximumPacketSize: 2000)
        // Chunks of 1.5 packets, so a partial packet is usually left buffered between reads.
        let chunkSize = packet.count * 3 / 2
        var decoded = 0
        var index = 0
        while index < stream.count {
            let end = min(index + chunkSize, stream.count)
            decoder.append(stream[index..<end])
            index = end
            while try decoder.next() != nil { decoded += 1 }
            #expect(decoder.bufferedByteCount < packet.count)
        }
        #expect(decoded == 2000)
        #expect(decoder.bufferedByteCount == 0)
    }

    /// An idle connection frees its buffer between packets; a half-received packet keeps its bytes.
    @Test func releasingTheBufferKeepsAnUnfinishedPacket() throws {
        let bytes = try Self.encodedStream()
        var decoder = MQTTPacketDecoder()
        var decoded: [MQTTPacket] = []
        // Feed in chunks of 7 bytes, releasing after each: only an empty buffer is freed.
        var index = 0
        while index < bytes.count {
            decoder.append(bytes[index..<min(index + 7, bytes.count)])
            index += 7
            while let packet = try decoder.next() { decoded.append(packet) }
            let buffered = decoder.bufferedByteCount
            decoder.releaseBufferIfEmpty()
            #expect(decoder.bufferedByteCount == buffered)
        }
        #expect(decoded == Self.stream)
        #expect(decoder.bufferedByteCount == 0)
    }
}
