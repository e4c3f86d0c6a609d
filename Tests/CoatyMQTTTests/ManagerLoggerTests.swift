import CoatyBroker
import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyModel
import CoatyTesting
import Testing

/// The logger set on a communication manager reaches its MQTT transport, unless the transport has
/// its own.
@Suite(.timeLimit(.minutes(1)))
struct ManagerLoggerTests {
    @Test func theManagersLoggerReachesATransportWithoutOne() async throws {
        let handler = InMemoryLogHandler()
        try await MQTTBroker.withRunning { broker in
            let manager = CommunicationManager(
                transport: MQTTTransport(brokerURL: "mqtt://127.0.0.1:\(broker.port)"),
                configuration: .init(
                    identity: Identity(name: "Logged"),
                    logger: CoatyLogger(label: "agent", level: .info, handler: handler)
                )
            )
            try await withOnline([manager]) {}
        }
        let connected = handler.entries.first { $0.message.hasPrefix("connected to ") }
        #expect(connected?.label == "coaty.mqtt")
        #expect(connected?.source.module == "CoatyMQTT")
    }

    @Test func aTransportsOwnLoggerWins() async throws {
        let managerHandler = InMemoryLogHandler()
        let transportHandler = InMemoryLogHandler()
        try await MQTTBroker.withRunning { broker in
            let manager = CommunicationManager(
                transport: MQTTTransport(
                    configuration: .init(
                        brokerURL: "mqtt://127.0.0.1:\(broker.port)",
                        logger: CoatyLogger(label: "transport", handler: transportHandler)
                    )
                ),
                configuration: .init(
                    identity: Identity(name: "Logged"),
                    logger: CoatyLogger(label: "agent", level: .info, handler: managerHandler)
                )
            )
            try await withOnline([manager]) {}
        }
        #expect(transportHandler.entries.contains { $0.message.hasPrefix("connected to ") && $0.label == "transport" })
        #expect(!managerHandler.entries.contains { $0.message.hasPrefix("connected to ") })
    }
}
