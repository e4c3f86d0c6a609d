import CoatyCore
import CoatyTransport
import Synchronization
import Testing

@testable import CoatyCommunication

@Suite(.timeLimit(.minutes(1)))
struct InProcessBusTests {
    /// Topics are compared byte for byte, as MQTT does: two spellings of one text ("café" precomposed
    /// and decomposed) are two topics, each with its own retained message.
    @Test func canonicallyEquivalentTopicsKeepTheirOwnRetainedMessages() async throws {
        let transport = InProcessTransport(bus: InProcessBus())
        let composed = "retained/caf\u{E9}"
        let decomposed = "retained/cafe\u{301}"
        try await transport.withConnection(.init(clientID: "publisher"), onMessage: { _ in }) { connection in
            try await connection.publish(TransportMessage(topic: composed, payload: [1], retain: true))
            try await connection.publish(TransportMessage(topic: decomposed, payload: [2], retain: true))
        }
        let received = Mutex<[TransportMessage]>([])
        try await transport.withConnection(
            .init(clientID: "late"),
            onMessage: { message in received.withLock { $0.append(message) } }
        ) { connection in
            // Retained messages are handed over while the subscription is made.
            try await connection.subscribe(to: [TopicFilter("retained/#")])
        }
        let messages = received.withLock { $0 }.sorted { $0.payload.lexicographicallyPrecedes($1.payload) }
        #expect(messages.map { Array($0.topic.utf8) } == [Array(composed.utf8), Array(decomposed.utf8)])
        #expect(messages.map(\.payload) == [[1], [2]])
    }
}
