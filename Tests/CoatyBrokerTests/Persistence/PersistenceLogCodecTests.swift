import CoatyCore
import Testing

@testable import CoatyBroker

/// The log format on its own: checksums, every record kind, and recovery of the longest valid prefix
/// from logs cut at every byte or with any one byte flipped.
struct PersistenceLogCodecTests {
    static let client = Array("client-1".utf8)

    /// One record of every kind, with non-trivial fields.
    static let records: [PersistenceRecord] = [
        .sessionCreated(clientID: client),
        .subscribed(clientID: client, filter: Array("a/+/#".utf8), qos: .exactlyOnce),
        .queued(clientID: client, message: BrokerMessage(topic: "a/b", payload: [0, 1, 255], qos: .atLeastOnce)),
        .queued(clientID: client, message: BrokerMessage(topic: "a/c", payload: [], qos: .exactlyOnce, retain: true)),
        .sent(clientID: client, packetID: 1),
        .sent(clientID: client, packetID: 65_535),
        .pubrecReceived(clientID: client, packetID: 65_535),
        .completed(clientID: client, packetID: 1),
        .inboundReceived(clientID: client, packetID: 7),
        .inboundReleased(clientID: client, packetID: 7),
        .unsubscribed(clientID: client, filter: Array("a/+/#".utf8)),
        .retainedSet(message: BrokerMessage(topic: "$SYS/x", payload: Array("v".utf8), qos: .atMostOnce, retain: true)),
        .retainedCleared(topic: Array("$SYS/x".utf8)),
        .sessionEnded(clientID: client),
    ]

    @Test func crc32MatchesTheStandardCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
    }

    @Test func everyRecordKindRoundTrips() {
        let log = PersistenceLogCodec.encodeLog(Self.records)
        #expect(log.starts(with: Array("CoatyDB".utf8) + [1]))
        let (records, damage) = PersistenceLogCodec.decode(log)
        #expect(records == Self.records)
        #expect(damage == nil)
        #expect(PersistenceLogCodec.decode([]).records.isEmpty && PersistenceLogCodec.decode([]).damage == nil)
    }

    /// A log cut at any byte keeps exactly the records that end before the cut, and reports the rest
    /// as an incomplete last record (a crash while writing).
    @Test func aLogCutAtEveryByteKeepsTheCompleteRecords() {
        let log = PersistenceLogCodec.encodeLog(Self.records)
        var ends: [Int] = []
        var buffer = PersistenceLogCodec.header
        for record in Self.records {
            PersistenceLogCodec.encode(record, into: &buffer)
            ends.append(buffer.count)
        }
        for length in 1..<log.count {
            let (records, damage) = PersistenceLogCodec.decode(Array(log[..<length]))
            let complete = ends.count { $0 <= length }
            #expect(records == Array(Self.records.prefix(complete)), "cut at \(length)")
            if ends.contains(length) || length == PersistenceLogCodec.header.count {
                #expect(damage == nil, "cut at \(length)")
            } else {
                let start = complete == 0 ? (length < 8 ? 0 : 8) : ends[complete - 1]
                #expect(
                    damage
                        == PersistenceLogCodec.Damage(offset: start, discardedBytes: length - start, reason: .truncated),
                    "cut at \(length)"
                )
            }
        }
    }

    /// A log with any one byte flipped keeps the records before the damaged one, never a wrong
    /// record, and reports the damage.
    @Test func aFlippedByteAnywhereStopsAtTheDamagedRecord() {
        let log = PersistenceLogCodec.encodeLog(Self.records)
        var starts: [Int] = []
        var buffer = PersistenceLogCodec.header
        for record in Self.records {
            starts.append(buffer.count)
            PersistenceLogCodec.encode(record, into: &buffer)
        }
        for offset in 0..<log.count {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = log
                damaged[offset] ^= mask
                let (records, damage) = PersistenceLogCodec.decode(damaged)
                let damagedRecord = starts.lastIndex { $0 <= offset }
                let kept = damagedRecord ?? 0
                #expect(records == Array(Self.records.prefix(kept)), "flip at \(offset)")
                #expect(damage?.offset == (damagedRecord.map { starts[$0] } ?? 0), "flip at \(offset)")
                if damagedRecord == nil { #expect(damage?.reason == .unknownHeader, "flip at \(offset)") }
            }
        }
    }

    @Test func aForeignFileIsNotALog() {
        let (records, damage) = PersistenceLogCodec.decode(Array("user alice\n".utf8))
        #expect(records.isEmpty)
        #expect(damage == PersistenceLogCodec.Damage(offset: 0, discardedBytes: 11, reason: .unknownHeader))
        #expect(damage?.description.contains("not a Coaty broker log") == true)
    }
}
