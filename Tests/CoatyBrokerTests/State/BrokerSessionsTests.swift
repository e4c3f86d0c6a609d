import CoatyCore
import Testing

@testable import CoatyBroker

struct BrokerSessionsTests {
    typealias Output = BrokerSessions.Output
    private let c1 = ConnectionID(rawValue: 1)
    private let c2 = ConnectionID(rawValue: 2)
    private let c3 = ConnectionID(rawValue: 3)

    private func message(_ topic: String, _ qos: QualityOfService, _ payload: [UInt8] = [1]) -> BrokerMessage {
        BrokerMessage(topic: topic, payload: payload, qos: qos)
    }

    private func connect(
        _ state: inout BrokerSessions,
        _ clientID: String,
        clean: Bool,
        _ connection: ConnectionID,
        will: BrokerMessage? = nil
    ) -> (Bool, SessionID, [Output]) {
        var outputs: [Output] = []
        let (present, session) = state.connect(
            clientID: clientID,
            cleanSession: clean,
            will: will,
            connection: connection,
            into: &outputs
        )
        return (present, session, outputs)
    }

    private func subscribe(
        _ state: inout BrokerSessions,
        _ session: SessionID,
        _ filter: String,
        _ qos: QualityOfService
    ) throws -> [Output] {
        var outputs: [Output] = []
        _ = state.subscribe(session, to: [(try TopicFilter(filter), qos)], into: &outputs)
        return outputs
    }

    @Test func deliversAtMinimumOfPublishedAndGrantedQoS() throws {
        var state = BrokerSessions()
        let (_, s1, _) = connect(&state, "sub", clean: true, c1)
        _ = try subscribe(&state, s1, "t/#", .atLeastOnce)
        var outputs: [Output] = []
        state.publish(message("t/a", .exactlyOnce), into: &outputs)
        state.publish(message("t/b", .atMostOnce), into: &outputs)
        #expect(
            outputs == [
                .publish(c1, message("t/a", .atLeastOnce), packetID: 1, dup: false),
                .publish(c1, message("t/b", .atMostOnce), packetID: nil, dup: false),
            ]
        )
    }

    /// The sessions a topic reaches, by the same matching as publishing, with the highest QoS
    /// granted, and publishing to them as found delivers as publishing does.
    @Test func subscribersOfATopicAreTheSessionsItReaches() throws {
        var state = BrokerSessions()
        let (_, s1, _) = connect(&state, "one", clean: true, c1)
        let (_, s2, _) = connect(&state, "two", clean: true, c2)
        _ = try subscribe(&state, s1, "t/+", .atMostOnce)
        _ = try subscribe(&state, s2, "#", .atMostOnce)
        _ = try subscribe(&state, s2, "t/a", .atLeastOnce)
        var subscribers = state.subscribers(of: Array("t/a".utf8))
        #expect(subscribers.count == 2)
        #expect(subscribers[s1] == .atMostOnce)
        #expect(subscribers[s2] == .atLeastOnce)
        #expect(state.subscribers(of: Array("t/a/b".utf8))[s1] == nil)
        #expect(state.subscribers(of: Array("t/a/b".utf8))[s2] == .atMostOnce)
        #expect(state.subscribers(of: Array("$SYS/x".utf8)).isEmpty, "a '#' does not match a '$' topic")
        var outputs: [Output] = []
        state.publish(message("t/a", .atLeastOnce, [1]), to: subscribers, into: &outputs)
        #expect(outputs.count == 2)
        #expect(outputs.contains(.publish(c1, message("t/a", .atMostOnce, [1]), packetID: nil, dup: false)))
        #expect(outputs.contains(.publish(c2, message("t/a", .atLeastOnce, [1]), packetID: 1, dup: false)))
        state.unsubscribe(s1, from: ["t/+"])
        subscribers = state.subscribers(of: Array("t/a".utf8))
        #expect(subscribers[s1] == nil)
        #expect(subscribers.count == 1)
    }

    @Test func cleanSessionIsDiscardedAndPersistentOneResumed() throws {
        var state = BrokerSessions()
        var (present, s1, _) = connect(&state, "p", clean: false, c1)
        #expect(!present)
        _ = try subscribe(&state, s1, "t", .atLeastOnce)
        var outputs: [Output] = []
        state.connectionClosed(c1, graceful: true, into: &outputs)
        // Offline: QoS 1 is queued, QoS 0 is not.
        state.publish(message("t", .atLeastOnce, [7]), into: &outputs)
        state.publish(message("t", .atMostOnce, [8]), into: &outputs)
        #expect(outputs.isEmpty)
        #expect(state.session(clientID: "p")?.pending.count == 1)
        (present, s1, outputs) = connect(&state, "p", clean: false, c2)
        #expect(present)
        #expect(outputs == [.publish(c2, message("t", .atLeastOnce, [7]), packetID: 1, dup: false)])
        // A clean connect discards the session and its subscriptions.
        state.connectionClosed(c2, graceful: true, into: &outputs)
        (present, _, _) = connect(&state, "p", clean: true, c3)
        #expect(!present)
        #expect(state.subscriptions.isEmpty)
        state.connectionClosed(c3, graceful: true, into: &outputs)
        #expect(state.session(clientID: "p") == nil)
    }

    @Test func unacknowledgedMessagesAreRedeliveredWithDupInOrder() throws {
        var state = BrokerSessions()
        let (_, s1, _) = connect(&state, "p", clean: false, c1)
        _ = try subscribe(&state, s1, "t", .exactlyOnce)
        var outputs: [Output] = []
        state.publish(message("t", .atLeastOnce, [1]), into: &outputs)
        state.publish(message("t", .exactlyOnce, [2]), into: &outputs)
        state.publish(message("t", .exactlyOnce, [3]), into: &outputs)
        do { let result = state.pubrec(s1, packetID: 3, into: &outputs); #expect(result == .ok) }
        #expect(outputs.last == .pubrel(c1, 3))
        state.connectionClosed(c1, graceful: false, into: &outputs)
        let (_, _, resumed) = connect(&state, "p", clean: false, c2)
        #expect(
            resumed == [
                .publish(c2, message("t", .atLeastOnce, [1]), packetID: 1, dup: true),
                .publish(c2, message("t", .exactlyOnce, [2]), packetID: 2, dup: true),
                .pubrel(c2, 3),
            ]
        )
    }

    @Test func inFlightWindowQueuesAndRefills() throws {
        var state = BrokerSessions(limits: .init(maximumInFlight: 2, maximumQueued: 3))
        let (_, s1, _) = connect(&state, "p", clean: true, c1)
        _ = try subscribe(&state, s1, "t", .atLeastOnce)
        var outputs: [Output] = []
        for payload in UInt8(1)...6 { state.publish(message("t", .atLeastOnce, [payload]), into: &outputs) }
        #expect(outputs.count == 2)
        // 4 waited for 3 slots: the oldest queued one (payload 3) was dropped and counted.
        #expect(state.session(clientID: "p")?.pending.elements.map(\.payload) == [[4], [5], [6]])
        #expect(state.droppedMessages == 1)
        outputs.removeAll()
        do { let result = state.puback(s1, packetID: 1, into: &outputs); #expect(result == .ok) }
        #expect(outputs == [.publish(c1, message("t", .atLeastOnce, [4]), packetID: 3, dup: false)])
    }

    /// The session queue is bounded by bytes too: the oldest messages make room for a new one, and a
    /// message larger than the bound on its own still gets through, alone.
    @Test func sessionQueueDropsOldestMessagesBeyondItsByteBound() throws {
        var state = BrokerSessions(limits: .init(maximumInFlight: 1, maximumQueued: 100, maximumQueuedBytes: 100))
        let (_, s1, _) = connect(&state, "p", clean: true, c1)
        _ = try subscribe(&state, s1, "t", .atLeastOnce)
        var outputs: [Output] = []
        // The first goes in flight; each queued one takes 1 (topic) + 30 bytes: three fit in 100.
        for payload in UInt8(1)...6 {
            state.publish(message("t", .atLeastOnce, [UInt8](repeating: payload, count: 30)), into: &outputs)
        }
        #expect(outputs.count == 1)
        #expect(state.session(clientID: "p")?.pending.elements.map(\.payload.first) == [4, 5, 6])
        #expect(state.session(clientID: "p")?.pending.byteCount == 93)
        #expect(state.droppedMessages == 2)
        // 1 + 150 bytes alone exceed the bound: all three older ones go, the large one stays.
        state.publish(message("t", .atLeastOnce, [UInt8](repeating: 7, count: 150)), into: &outputs)
        #expect(state.session(clientID: "p")?.pending.elements.map(\.payload.first) == [7])
        #expect(state.session(clientID: "p")?.pending.byteCount == 151)
        #expect(state.droppedMessages == 5)
        // Delivering frees its bytes.
        outputs.removeAll()
        do { let result = state.puback(s1, packetID: 1, into: &outputs); #expect(result == .ok) }
        #expect(outputs.count == 1)
        #expect(state.session(clientID: "p")?.pending.byteCount == 0)
    }

    @Test func packetIDsSkipIdsInUseAndZero() {
        var session = Session(
            id: SessionID(rawValue: 1),
            clientID: "x",
            isPersistent: false,
            queueCapacity: 1,
            queueByteCapacity: 1
        )
        session.nextPacketID = UInt16.max
        session.inFlight = [.init(packetID: 1, message: message("t", .atLeastOnce), state: .awaitingPubAck)]
        do { let result = session.allocatePacketID(); #expect(result == UInt16.max) }
        do { let result = session.allocatePacketID(); #expect(result == 2) }
    }

    @Test func wrongAcknowledgementTypesAreViolations() throws {
        var state = BrokerSessions()
        let (_, s1, _) = connect(&state, "p", clean: true, c1)
        _ = try subscribe(&state, s1, "t", .exactlyOnce)
        var outputs: [Output] = []
        state.publish(message("t", .atLeastOnce), into: &outputs)  // id 1, QoS 1
        state.publish(message("t", .exactlyOnce), into: &outputs)  // id 2, QoS 2
        do { let result = state.pubrec(s1, packetID: 1, into: &outputs); #expect(result == .protocolViolation) }
        do { let result = state.puback(s1, packetID: 2, into: &outputs); #expect(result == .protocolViolation) }
        do { let result = state.pubcomp(s1, packetID: 2, into: &outputs); #expect(result == .protocolViolation) }
        // Unsolicited acks: PUBACK/PUBCOMP ignored, PUBREC answered with PUBREL.
        outputs.removeAll()
        do { let result = state.puback(s1, packetID: 9, into: &outputs); #expect(result == .ok) }
        do { let result = state.pubcomp(s1, packetID: 9, into: &outputs); #expect(result == .ok) }
        do { let result = state.pubrec(s1, packetID: 9, into: &outputs); #expect(result == .ok) }
        #expect(outputs == [.pubrel(c1, 9)])
        // A duplicate PUBREC re-sends PUBREL; PUBCOMP completes.
        outputs.removeAll()
        do { let result = state.pubrec(s1, packetID: 2, into: &outputs); #expect(result == .ok) }
        do { let result = state.pubrec(s1, packetID: 2, into: &outputs); #expect(result == .ok) }
        #expect(outputs == [.pubrel(c1, 2), .pubrel(c1, 2)])
        do { let result = state.pubcomp(s1, packetID: 2, into: &outputs); #expect(result == .ok) }
        #expect(state.session(clientID: "p")?.inFlight.map(\.packetID) == [1])
    }

    @Test func inboundQoS2DuplicatesAreDetectedUntilReleased() {
        var state = BrokerSessions()
        let (_, s1, _) = connect(&state, "p", clean: true, c1)
        do { let result = state.receiveQoS2(s1, packetID: 5); #expect(result) }
        do { let result = state.receiveQoS2(s1, packetID: 5); #expect(!result) }
        state.release(s1, packetID: 5)
        do { let result = state.receiveQoS2(s1, packetID: 5); #expect(result) }
    }

    @Test func willIsPublishedOnAbruptCloseOnly() throws {
        var state = BrokerSessions()
        let (_, s1, _) = connect(&state, "sub", clean: true, c1)
        _ = try subscribe(&state, s1, "will", .atMostOnce)
        let will = BrokerMessage(topic: "will", payload: [9], qos: .atMostOnce, retain: true)
        _ = connect(&state, "a", clean: true, c2, will: will)
        _ = connect(&state, "b", clean: true, c3, will: will)
        var outputs: [Output] = []
        state.discardWill(of: c2)
        state.connectionClosed(c2, graceful: true, into: &outputs)
        #expect(outputs.isEmpty)
        state.connectionClosed(c3, graceful: false, into: &outputs)
        #expect(outputs == [.publish(c1, message("will", .atMostOnce, [9]), packetID: nil, dup: false)])
        #expect(state.retained.message(topic: Array("will".utf8))?.payload == [9])
    }

    @Test(arguments: [(false, false, true), (true, false, true), (false, true, true), (true, true, false)])
    func takeoverClosesTheOldConnection(oldPersistent: Bool, newPersistent: Bool, willPublished: Bool) throws {
        var state = BrokerSessions()
        let (_, s1, _) = connect(&state, "sub", clean: true, c1)
        _ = try subscribe(&state, s1, "will", .atMostOnce)
        _ = connect(&state, "x", clean: !oldPersistent, c2, will: message("will", .atMostOnce))
        let (present, _, outputs) = connect(&state, "x", clean: !newPersistent, c3)
        #expect(outputs.first == .close(c2))
        #expect(
            outputs.contains(.publish(c1, message("will", .atMostOnce), packetID: nil, dup: false)) == willPublished
        )
        #expect(present == (oldPersistent && newPersistent))
        // The old connection's late close changes nothing.
        var late: [Output] = []
        state.connectionClosed(c2, graceful: false, into: &late)
        #expect(late.isEmpty)
        #expect(state.session(clientID: "x")?.connection == c3)
    }

    @Test func subscribingDeliversRetainedMessagesWithRetainSet() throws {
        var state = BrokerSessions()
        var outputs: [Output] = []
        state.publish(BrokerMessage(topic: "r/1", payload: [1], qos: .exactlyOnce, retain: true), into: &outputs)
        let (_, s1, _) = connect(&state, "sub", clean: true, c1)
        let delivered = try subscribe(&state, s1, "r/+", .atLeastOnce)
        #expect(
            delivered == [
                .publish(
                    c1,
                    BrokerMessage(topic: "r/1", payload: [1], qos: .atLeastOnce, retain: true),
                    packetID: 1,
                    dup: false
                )
            ]
        )
    }

    @Test func subscriptionsBeyondTheLimitAreRefusedAndGetNoRetainedMessages() throws {
        var state = BrokerSessions(limits: .init(maximumSubscriptions: 2))
        var outputs: [Output] = []
        state.publish(BrokerMessage(topic: "r", payload: [1], qos: .atMostOnce, retain: true), into: &outputs)
        let (_, s1, _) = connect(&state, "sub", clean: true, c1)
        outputs = []
        let granted = state.subscribe(
            s1,
            to: [
                (try TopicFilter("a"), .atMostOnce), (try TopicFilter("b"), .atLeastOnce),
                (try TopicFilter("r"), .atMostOnce),
            ],
            into: &outputs
        )
        #expect(granted == [.atMostOnce, .atLeastOnce, nil])
        #expect(outputs.isEmpty)
        #expect(state.subscriptions.count == 2)
        // A filter already held can be resubscribed at another QoS; a new one is still refused.
        let again = state.subscribe(
            s1,
            to: [(try TopicFilter("a"), .exactlyOnce), (try TopicFilter("c"), .atMostOnce)],
            into: &outputs
        )
        #expect(again == [.exactlyOnce, nil])
        #expect(
            state.session(clientID: "sub")?.subscriptions.dictionary == [
                ByteKey(Array("a".utf8)): .exactlyOnce, ByteKey(Array("b".utf8)): .atLeastOnce,
            ]
        )
        // Room made by unsubscribing is available again.
        state.unsubscribe(s1, from: ["b"])
        #expect(state.subscribe(s1, to: [(try TopicFilter("r"), .atMostOnce)], into: &outputs) == [.atMostOnce])
        #expect(outputs.count == 1)
    }

    @Test func theSessionOfflineLongestIsDiscardedBeyondTheLimit() throws {
        var state = BrokerSessions(limits: .init(maximumOfflineSessions: 2))
        var outputs: [Output] = []
        // p1, p2, p3 go offline in turn, each with one queued QoS 1 message; p1 comes back in between.
        for (index, name) in ["p1", "p2", "p3"].enumerated() {
            let connection = ConnectionID(rawValue: UInt64(10 + index))
            let (_, session, _) = connect(&state, name, clean: false, connection)
            _ = try subscribe(&state, session, name, .atLeastOnce)
            state.connectionClosed(connection, graceful: true, into: &outputs)
            state.publish(message(name, .atLeastOnce), into: &outputs)
        }
        // p1 went offline first, so it is discarded with its queued message.
        #expect(state.session(clientID: "p1") == nil)
        #expect(state.session(clientID: "p2")?.pending.count == 1)
        #expect(state.session(clientID: "p3")?.pending.count == 1)
        #expect(state.discardedSessions == 1)
        #expect(state.droppedMessages == 1)
        #expect(state.subscriptions.count == 2)
        // p2 reconnects and goes offline again: now p3 is the oldest offline session.
        let (present, _, _) = connect(&state, "p2", clean: false, c1)
        #expect(present)
        let (_, _, _) = connect(&state, "p4", clean: false, c2)
        state.connectionClosed(c2, graceful: true, into: &outputs)
        #expect(state.sessions.count == 3)
        state.connectionClosed(c1, graceful: true, into: &outputs)
        #expect(state.session(clientID: "p3") == nil)
        #expect(state.session(clientID: "p2") != nil)
        #expect(state.session(clientID: "p4") != nil)
        #expect(state.discardedSessions == 2)
        // Clean sessions and online persistent ones never count.
        let (_, _, _) = connect(&state, "c", clean: true, c3)
        #expect(state.sessions.count == 3)
    }

    @Test func offlineSessionsStayBoundedUnderChurn() {
        var state = BrokerSessions(limits: .init(maximumOfflineSessions: 10))
        var outputs: [Output] = []
        var mostSessions = 0
        for round in 0..<5_000 {
            let connection = ConnectionID(rawValue: UInt64(100 + round))
            // Half reconnect an existing id, half bring a new one.
            let name = round.isMultiple(of: 2) ? "same\(round % 20)" : "new\(round)"
            _ = connect(&state, name, clean: false, connection)
            state.connectionClosed(connection, graceful: false, into: &outputs)
            mostSessions = max(mostSessions, state.sessions.count)
        }
        #expect(mostSessions == 10)
        #expect(state.discardedSessions > 2_000)
    }
}
