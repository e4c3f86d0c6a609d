import CoatyCore
import Foundation
import Synchronization
import Testing

@testable import CoatyBroker

/// The persistence writer on its own: a log that outgrows 4 MiB and 4 times its last snapshot is
/// rewritten as a snapshot of the live state, which replays to that state.
@Suite(.timeLimit(.minutes(1)))
struct CompactionTests {
    @Test func aLogGrownPastItsBoundIsCompactedToTheLiveState() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coaty-compact-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let limits = BrokerSessions.Limits(maximumQueued: 100)
        let (persistence, recovery) = try BrokerPersistence.open(
            .init(directory: directory.path),
            limits: limits,
            logger: .disabled
        )
        #expect(recovery.recordCount == 0 && recovery.damage == nil)
        try persistence.startLog(with: [], keepingDamagedLog: false)
        let state = Mutex(BrokerSessions(limits: limits))
        let take: @Sendable () -> [PersistenceRecord] = { state.withLock { $0.takeJournal() } }
        let capture: @Sendable () -> (records: [PersistenceRecord], state: BrokerSessions) = {
            state.withLock { ($0.takeJournal(), $0) }
        }
        func logSize() throws -> Int {
            try FileManager.default.attributesOfItem(atPath: persistence.logPath)[.size] as? Int ?? 0
        }

        // An offline persistent session gets 6,000 messages of 1 KiB; its queue keeps the last 100.
        state.withLock { sessions in
            sessions.startJournal()
            var outputs: [BrokerSessions.Output] = []
            let connection = ConnectionID(rawValue: 1)
            let (_, id) = sessions.connect(
                clientID: "c",
                cleanSession: false,
                will: nil,
                connection: connection,
                into: &outputs
            )
            _ = sessions.subscribe(id, to: [(try! TopicFilter("t"), .atLeastOnce)], into: &outputs)
            sessions.connectionClosed(connection, graceful: true, into: &outputs)
            for index in 0..<6000 {
                let payload = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 1024)
                sessions.publish(BrokerMessage(topic: "t", payload: payload, qos: .atLeastOnce), into: &outputs)
            }
        }
        persistence.writeJournal(take: take, capture: capture)
        let grown = try logSize()
        #expect(grown > 6_000_000)

        // The next write finds the log too large and compacts it.
        persistence.writeJournal(take: take, capture: capture)
        let compacted = try logSize()
        #expect(compacted < 120_000, "\(grown) → \(compacted) bytes")
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: persistence.logPath)))
        let (records, damage) = PersistenceLogCodec.decode(bytes)
        #expect(damage == nil)
        var restored = BrokerSessions(limits: limits)
        restored.restore(PersistentState(limits: limits, replaying: records))
        #expect(restored.snapshotRecords() == state.withLock { $0.snapshotRecords() })
        #expect(
            restored.session(clientID: "c")?.pending.elements.last?.payload.first == UInt8(truncatingIfNeeded: 5999)
        )
        persistence.finish(take: take, capture: capture)
    }
}
