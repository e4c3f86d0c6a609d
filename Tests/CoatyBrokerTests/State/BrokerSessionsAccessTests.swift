import CoatyCore
import Testing

@testable import CoatyBroker

/// The state machine delivers only what each session's client may read.
struct BrokerSessionsAccessTests {
    private let reader = ConnectionID(rawValue: 1)
    private let other = ConnectionID(rawValue: 2)

    private func access(_ acl: String, username: String?) throws -> ClientAccess {
        try AccessControlList(parsing: acl).access(clientID: "c", username: username)
    }

    @Test func publishSkipsSessionsThatMayNotRead() throws {
        var state = BrokerSessions()
        var outputs: [BrokerSessions.Output] = []
        let acl = "user r\ntopic read a/#"
        let (_, restricted) = state.connect(
            clientID: "r",
            cleanSession: true,
            will: nil,
            connection: self.reader,
            access: try self.access(acl, username: "r"),
            into: &outputs
        )
        let (_, open) = state.connect(
            clientID: "o",
            cleanSession: true,
            will: nil,
            connection: self.other,
            into: &outputs
        )
        for session in [restricted, open] {
            _ = state.subscribe(session, to: [(try TopicFilter("#"), .atMostOnce)], into: &outputs)
        }
        outputs = []
        state.publish(BrokerMessage(topic: "b/x", payload: [1], qos: .atMostOnce), into: &outputs)
        state.publish(BrokerMessage(topic: "a/x", payload: [2], qos: .atMostOnce), into: &outputs)
        // Sessions matching one message come in no particular order; per connection, in publish order.
        func topics(to connection: ConnectionID) -> [String] {
            outputs.compactMap { output in
                guard case .publish(connection, let message, _, _) = output else { return nil }
                return String(decoding: message.topic, as: UTF8.self)
            }
        }
        #expect(topics(to: self.reader) == ["a/x"])
        #expect(topics(to: self.other) == ["b/x", "a/x"])
    }

    @Test func retainedMessagesAreFilteredOnSubscribe() throws {
        var state = BrokerSessions()
        var outputs: [BrokerSessions.Output] = []
        for topic in ["a/kept", "b/kept"] {
            state.publish(BrokerMessage(topic: topic, payload: [1], qos: .atMostOnce, retain: true), into: &outputs)
        }
        let (_, session) = state.connect(
            clientID: "r",
            cleanSession: true,
            will: nil,
            connection: self.reader,
            access: try self.access("topic read a/#", username: nil),
            into: &outputs
        )
        let granted = state.subscribe(session, to: [(try TopicFilter("+/kept"), .atMostOnce)], into: &outputs)
        #expect(granted == [.atMostOnce])
        #expect(
            outputs == [
                .publish(
                    self.reader,
                    BrokerMessage(topic: "a/kept", payload: [1], qos: .atMostOnce, retain: true),
                    packetID: nil,
                    dup: false
                )
            ]
        )
    }
}
