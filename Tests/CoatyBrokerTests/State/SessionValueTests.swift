import CoatyCore
import Testing

@testable import CoatyBroker

/// `Session` and `BrokerSessions` are values: a changed copy leaves the original as it was.
struct SessionValueTests {
    private func session() -> Session {
        Session(
            id: SessionID(rawValue: 1),
            clientID: "a",
            isPersistent: true,
            queueCapacity: 10,
            queueByteCapacity: 1_000
        )
    }

    @Test func aChangedCopyLeavesTheOriginalAsItWas() {
        var original = self.session()
        original.subscriptions[ByteKey(Array("t".utf8))] = .atLeastOnce
        var copy = original
        copy.subscriptions[ByteKey(Array("u".utf8))] = .atMostOnce
        copy.inFlight.append(
            .init(
                packetID: 7,
                message: BrokerMessage(topic: "t", payload: [1], qos: .atLeastOnce),
                state: .awaitingPubAck
            )
        )
        copy.connection = ConnectionID(rawValue: 3)
        copy.isPersistent = false
        copy.nextPacketID = 9
        copy.acknowledgements += 1
        copy.droppedMessages += 1
        copy.inboundQoS2.insert(5)
        #expect(original.subscriptions.count == 1 && original.inFlight.isEmpty && original.connection == nil)
        #expect(original.isPersistent && original.nextPacketID == 1 && original.inboundQoS2.isEmpty)
        #expect(original.acknowledgements == 0 && original.droppedMessages == 0)
        #expect(copy.subscriptions.count == 2 && copy.inFlight.count == 1 && copy.connection?.rawValue == 3)
        #expect(!copy.isPersistent && copy.nextPacketID == 9 && copy.inboundQoS2 == [5])
        #expect(copy.acknowledgements == 1 && copy.droppedMessages == 1)
        #expect(copy.id == original.id && copy.clientID == original.clientID)
    }

    @Test func aCopyOfTheBrokersSessionsIsIndependent() {
        var sessions = BrokerSessions()
        var outputs: [BrokerSessions.Output] = []
        _ = sessions.connect(
            clientID: "a",
            cleanSession: false,
            will: nil,
            connection: ConnectionID(rawValue: 1),
            into: &outputs
        )
        let before = sessions
        sessions.connectionClosed(ConnectionID(rawValue: 1), graceful: true, into: &outputs)
        #expect(before.session(clientID: "a")?.connection?.rawValue == 1)
        #expect(sessions.session(clientID: "a")?.connection == nil)
    }
}
