import CoatyBroker
import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyModel
import CoatyTransport
import Testing

/// `MQTTTransport` over `ws://` to the embedded broker's WebSocket listener, beside clients on TCP.
@Suite(.timeLimit(.minutes(1)))
struct MQTTTransportWebSocketTests {
    private static let configuration = MQTTBroker.Configuration(webSocketPort: 0)

    /// Two Coaty agents, one on each listener, call each other: every request and response crosses
    /// from WebSocket to TCP or back.
    @Test func coatyAgentsTalkAcrossWebSocketAndTCP() async throws {
        try await MQTTBroker.withRunning(configuration: Self.configuration) { broker in
            let webSocketPort = try #require(broker.webSocketPort)
            let urls = ["ws://127.0.0.1:\(webSocketPort)/mqtt", "mqtt://127.0.0.1:\(broker.port)"]
            let managers = urls.enumerated().map { index, url in
                CommunicationManager(
                    transport: MQTTTransport(configuration: .init(brokerURL: url, connectTimeout: .seconds(10))),
                    configuration: .init(identity: Identity(name: index == 0 ? "browser-like" : "tcp"))
                )
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for manager in managers {
                    let states = manager.observeCommunicationState()
                    group.addTask { try await manager.run() }
                    _ = await states.first { $0 == .online }
                }
                for (caller, callee) in [(managers[0], managers[1]), (managers[1], managers[0])] {
                    let registration = try await callee.handleCalls("com.example.square") { call in
                        let value = call.parameter(at: 0)?.intValue ?? 0
                        try call.returnResult(.int(value * value))
                    }
                    var results: [Int] = []
                    for value in 0..<10 {
                        let event = try CallEvent(operation: "com.example.square", parameters: [.int(value)])
                        let reply = try await caller.call(event).first(timeout: .seconds(10))
                        results.append(reply.result?.intValue ?? -1)
                    }
                    registration.cancel()
                    #expect(results == (0..<10).map { $0 * $0 })
                }
                for manager in managers { manager.finish() }
                try await group.waitForAll()
            }
        }
    }

    /// Large messages span several WebSocket frames (64 KiB each) both ways; QoS 2 works over them.
    @Test func largeMessagesAndQoS2OverWebSocket() async throws {
        try await MQTTBroker.withRunning(configuration: Self.configuration) { broker in
            let webSocketPort = try #require(broker.webSocketPort)
            let webSocket = MQTTTransport(brokerURL: "ws://127.0.0.1:\(webSocketPort)")
            let tcp = MQTTTransport(brokerURL: "mqtt://127.0.0.1:\(broker.port)")
            let inbox = Inbox()
            let payload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try await webSocket.withMQTTConnection(.init(clientID: "ws-sub"), onMessage: inbox.onMessage) {
                subscriber in
                try await subscriber.subscribe(to: [TopicFilter("big/#")], qos: .exactlyOnce)
                try await tcp.withConnection(.init(clientID: "tcp-pub"), onMessage: { _ in }) { publisher in
                    try await publisher.publish(TransportMessage(topic: "big/1", payload: payload, qos: .exactlyOnce))
                }
                try await subscriber.publish(TransportMessage(topic: "big/2", payload: payload, qos: .atLeastOnce))
                let received = await inbox.next(2)
                #expect(received.map(\.topic) == ["big/1", "big/2"])
                #expect(received.allSatisfy { $0.payload == payload })
                #expect(received.first?.qos == .exactlyOnce)
            }
        }
    }

    @Test func webSocketConnectFailuresAreTransportErrors() async throws {
        try await MQTTBroker.withRunning { broker in
            // The TCP listener does not speak WebSocket: it takes the request for a bad CONNECT.
            let transport = MQTTTransport(
                configuration: .init(brokerURL: "ws://127.0.0.1:\(broker.port)/mqtt", connectTimeout: .seconds(10))
            )
            let error = await #expect(throws: TransportError.self) {
                try await transport.withConnection(.init(clientID: "x"), onMessage: { _ in }) { _ in }
            }
            #expect(error?.code == .connectFailed)
        }
    }
}
