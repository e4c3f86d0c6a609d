import CoatyMQTTPackets
import Testing

/// Mutated and random input: the decoder never traps, and whatever it accepts is canonical enough to
/// re-encode and decode to the same packet.
struct MQTTPacketFuzzTests {
    static func decodeAll(_ bytes: [UInt8], chunkSize: Int) -> (packets: [MQTTPacket], error: MQTTDecodingError?) {
        var decoder = MQTTPacketDecoder(maximumPacketSize: 4096)
        var packets: [MQTTPacket] = []
        var index = 0
        do throws(MQTTDecodingError) {
            while index < bytes.count {
                let end = min(index + chunkSize, bytes.count)
                decoder.append(bytes[index..<end])
                index = end
                while let packet = try decoder.next() { packets.append(packet) }
            }
        } catch {
            return (packets, error)
        }
        return (packets, nil)
    }

    @Test(arguments: 0..<4)
    func mutatedPacketsDecodeToReEncodablePacketsOrFail(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let originals = try MQTTPacketCodingTests.roundTripPackets.filter {
            try $0.encoded().count < 4096
        }.map { try $0.encoded() }
        var accepted = 0
        var rejected = 0
        for _ in 0..<5_000 {
            var bytes = originals[Int.random(in: 0..<originals.count, using: &random)]
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[position] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes[position] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                default: bytes.remove(at: position)
                }
                if bytes.isEmpty { bytes = [0] }
            }
            let (packets, error) = Self.decodeAll(bytes, chunkSize: Int.random(in: 1...64, using: &random))
            for packet in packets {
                let reencoded = try packet.encoded()
                #expect(try MQTTPacket(decoding: reencoded) == packet)
            }
            if error == nil { accepted += 1 } else { rejected += 1 }
        }
        #expect(rejected > 0)
        #expect(accepted + rejected == 5_000)
    }

    @Test func randomBytesNeverTrap() {
        var random = SplitMix64(seed: 42)
        for _ in 0..<2_000 {
            let count = Int.random(in: 0..<300, using: &random)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            _ = Self.decodeAll(bytes, chunkSize: Int.random(in: 1...50, using: &random))
            _ = try? MQTTPacket(decoding: bytes)
        }
    }
}
