import CoatyBroker
import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyTransport
import Testing

/// The embedded broker with the framework's own client, `MQTTTransport`.
@Suite(.timeLimit(.minutes(1)))
struct TransportInteropTests {
    @Test func mqttTransportExchangesMessagesAndWills() async throws {
        try await MQTTBroker.withRunning { broker in
            let transport = MQTTTransport(brokerURL: "mqtt://127.0.0.1:\(broker.port)")
            let (messages, continuation) = AsyncStream.makeStream(of: TransportMessage.self)
            let events = broker.events()
            try await transport.withConnection(.init(clientID: "coaty-sub"), onMessage: { continuation.yield($0) }) {
                subscriber in
                try await subscriber.subscribe(to: [TopicFilter("coaty/#")])
                try await transport.withConnection(.init(clientID: "coaty-pub"), onMessage: { _ in }) { publisher in
                    for qos in QualityOfService.allCases {
                        try await publisher.publish(
                            TransportMessage(topic: "coaty/qos\(qos.rawValue)", payload: [qos.rawValue], qos: qos)
                        )
                    }
                }
                var iterator = messages.makeAsyncIterator()
                var received: [String: [UInt8]] = [:]
                for _ in 0..<3 {
                    guard let message = await iterator.next() else { break }
                    received[message.topic] = message.payload
                }
                #expect(received == ["coaty/qos0": [0], "coaty/qos1": [1], "coaty/qos2": [2]])

                // A connection whose task is cancelled closes without DISCONNECT: its will is published.
                await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        let will = TransportMessage(topic: "coaty/will", payload: Array("gone".utf8))
                        try await transport.withConnection(
                            .init(clientID: "coaty-dying", lastWill: will),
                            onMessage: { _ in }
                        ) {
                            _ in try await Task.sleep(for: .seconds(60))
                        }
                    }
                    _ = await events.first {
                        if case .clientConnected("coaty-dying", _, _) = $0 { true } else { false }
                    }
                    group.cancelAll()
                    _ = try? await group.waitForAll()
                }
                let will = await iterator.next()
                #expect(will?.topic == "coaty/will")
                #expect(will?.payload == Array("gone".utf8))
            }
        }
    }
}
