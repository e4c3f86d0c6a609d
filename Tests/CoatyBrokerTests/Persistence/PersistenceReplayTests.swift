import CoatyCore
import Testing

@testable import CoatyBroker

/// The journal that `BrokerSessions` records, replayed by `PersistentState` and restored into a new
/// `BrokerSessions`, rebuilds the persistent part of the state exactly, and a restored session is
/// resumed as MQTT requires.
struct PersistenceReplayTests {
    typealias Output = BrokerSessions.Output
    private let limits = BrokerSessions.Limits(maximumInFlight: 2, maximumQueued: 3)

    private func message(_ topic: String, _ qos: QualityOfService, _ payload: UInt8, retain: Bool = false)
        -> BrokerMessage
    {
        BrokerMessage(topic: topic, payload: [payload], qos: qos, retain: retain)
    }

    /// Replays the journal of `state` onto the state it started from, restores that and compares.
    private func expectReplayRebuilds(_ state: inout BrokerSessions, from initial: [PersistenceRecord]) {
        let replayed = PersistentState(limits: self.limits, replaying: initial + state.takeJournal())
        #expect(replayed.ignoredRecords == 0)
        var restored = BrokerSessions(limits: self.limits)
        restored.restore(replayed)
        #expect(restored.snapshotRecords() == state.snapshotRecords())
    }

    @Test func theJournalRebuildsSessionsFlowsAndRetainedMessages() throws {
        var state = BrokerSessions(limits: self.limits)
        state.startJournal()
        var outputs: [Output] = []
        let c1 = ConnectionID(rawValue: 1)
        let c2 = ConnectionID(rawValue: 2)
        let c3 = ConnectionID(rawValue: 3)
        let (_, subscriber) = state.connect(
            clientID: "sub",
            cleanSession: false,
            will: nil,
            connection: c1,
            into: &outputs
        )
        let (_, publisher) = state.connect(
            clientID: "pub",
            cleanSession: false,
            will: nil,
            connection: c2,
            into: &outputs
        )
        let (_, clean) = state.connect(clientID: "clean", cleanSession: true, will: nil, connection: c3, into: &outputs)
        _ = state.subscribe(subscriber, to: [(try TopicFilter("t/#"), .exactlyOnce)], into: &outputs)
        _ = state.subscribe(clean, to: [(try TopicFilter("t/#"), .atLeastOnce)], into: &outputs)
        _ = state.subscribe(subscriber, to: [(try TopicFilter("gone"), .atMostOnce)], into: &outputs)
        state.unsubscribe(subscriber, from: ["gone"])
        // Two in flight (QoS 1 and 2), then the queue of 3 overflows and drops the oldest.
        for (index, qos) in [
            QualityOfService.atLeastOnce, .exactlyOnce, .atLeastOnce, .exactlyOnce, .atLeastOnce, .atLeastOnce,
        ]
        .enumerated() {
            state.publish(self.message("t/\(index)", qos, UInt8(index)), into: &outputs)
        }
        #expect(state.session(clientID: "sub")?.pending.count == 3)
        #expect(state.puback(subscriber, packetID: 1, into: &outputs) == .ok)
        #expect(state.pubrec(subscriber, packetID: 2, into: &outputs) == .ok)
        // Inbound QoS 2 from the publisher: one released, one not.
        let first = state.receiveQoS2(publisher, packetID: 10)
        let second = state.receiveQoS2(publisher, packetID: 11)
        #expect(first && second)
        state.release(publisher, packetID: 10)
        // Retained: set, replaced, set on another topic, cleared.
        state.publish(self.message("r/a", .atLeastOnce, 1, retain: true), into: &outputs)
        state.publish(self.message("r/a", .atMostOnce, 2, retain: true), into: &outputs)
        state.publish(self.message("r/b", .atMostOnce, 3, retain: true), into: &outputs)
        state.publish(BrokerMessage(topic: "r/b", payload: [], qos: .atMostOnce, retain: true), into: &outputs)
        // The broker's own statistics are not kept.
        state.publish(self.message("$SYS/broker/uptime", .atMostOnce, 1, retain: true), into: &outputs)
        #expect(state.snapshotRecords().filter { if case .retainedSet = $0 { true } else { false } }.count == 1)
        state.connectionClosed(c1, graceful: false, into: &outputs)
        state.connectionClosed(c3, graceful: true, into: &outputs)
        state.publish(self.message("t/late", .exactlyOnce, 9), into: &outputs)
        self.expectReplayRebuilds(&state, from: [])

        // A clean connect ends the publisher's persistent session; the journal after a snapshot says so.
        let snapshot = state.snapshotRecords()
        #expect(snapshot.contains(.sessionCreated(clientID: Array("pub".utf8))))
        #expect(!snapshot.contains(.sessionCreated(clientID: Array("clean".utf8))))
        state.connectionClosed(c2, graceful: true, into: &outputs)
        _ = state.connect(clientID: "pub", cleanSession: true, will: nil, connection: c3, into: &outputs)
        #expect(!state.snapshotRecords().contains(.sessionCreated(clientID: Array("pub".utf8))))
        self.expectReplayRebuilds(&state, from: snapshot)
    }

    @Test func aRestoredSessionResumesWithItsPacketIDsThenItsQueue() throws {
        var state = BrokerSessions(limits: self.limits)
        state.startJournal()
        var outputs: [Output] = []
        let (_, session) = state.connect(
            clientID: "sub",
            cleanSession: false,
            will: nil,
            connection: ConnectionID(rawValue: 1),
            into: &outputs
        )
        _ = state.subscribe(session, to: [(try TopicFilter("t"), .exactlyOnce)], into: &outputs)
        for index in 0..<3 { state.publish(self.message("t", .exactlyOnce, UInt8(index)), into: &outputs) }
        _ = state.pubrec(session, packetID: 1, into: &outputs)
        let replayed = PersistentState(limits: self.limits, replaying: state.takeJournal())

        var restored = BrokerSessions(limits: self.limits)
        restored.restore(replayed)
        #expect(restored.session(clientID: "sub")?.connection == nil)
        outputs = []
        let c2 = ConnectionID(rawValue: 2)
        let (present, _) = restored.connect(
            clientID: "sub",
            cleanSession: false,
            will: nil,
            connection: c2,
            into: &outputs
        )
        #expect(present)
        #expect(
            outputs == [
                .pubrel(c2, 1),
                .publish(c2, self.message("t", .exactlyOnce, 1), packetID: 2, dup: true),
            ]
        )
        // The queued message follows once a slot frees up, under a fresh id.
        outputs = []
        _ = restored.pubcomp(try #require(restored.session(clientID: "sub")?.id), packetID: 1, into: &outputs)
        #expect(outputs == [.publish(c2, self.message("t", .exactlyOnce, 2), packetID: 3, dup: false)])
    }

    @Test func recordsThatDoNotFitAreIgnoredAndCounted() {
        let client = Array("ghost".utf8)
        let state = PersistentState(
            limits: self.limits,
            replaying: [
                .queued(clientID: client, message: self.message("t", .atLeastOnce, 1)),
                .sessionCreated(clientID: client),
                .completed(clientID: client, packetID: 4),
                .sent(clientID: client, packetID: 1),
            ]
        )
        #expect(state.ignoredRecords == 3)
        #expect(state.sessions[client] != nil)
    }
}
