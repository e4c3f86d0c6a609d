import CoatyBroker
import CoatyCore
import CoatyMQTTPackets
import Testing

/// The broker's default packet size and its broker-wide limits on connections and on the bytes of
/// unfinished packets.
@Suite(.timeLimit(.minutes(2)))
struct LimitsTests {
    /// A Coaty app may send payloads of a megabyte, as mosquitto's default accepts; the default limit
    /// was 1 MiB with the header, so it refused them.
    @Test func aOneMebibytePayloadPassesByDefault() async throws {
        try await MQTTBroker.withRunning { broker in
            var subscriber = try await RawMQTTClient.connected(port: broker.port, clientID: "large-subscriber")
            try await subscriber.subscribe("large", qos: .atLeastOnce)
            var publisher = try await RawMQTTClient.connected(port: broker.port, clientID: "large-publisher")
            let payload = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0) }
            try await publisher.send(
                .publish(MQTTPublishPacket(topic: "large", payload: payload, qos: .atLeastOnce, packetID: 1))
            )
            #expect(try await publisher.receivePacket(timeout: .seconds(10)) == .puback(1))
            guard case .publish(let delivered) = try await subscriber.receivePacket(timeout: .seconds(10)) else {
                Issue.record("expected the delivery")
                return
            }
            #expect(delivered.payload == payload)
        }
    }

    @Test func anOverLimitPublishIsLoggedWithTheClientAndTheSize() async throws {
        let handler = InMemoryLogHandler()
        let configuration = MQTTBroker.Configuration(
            maximumPacketSize: 1024,
            logger: CoatyLogger(label: "broker", level: .info, handler: handler)
        )
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            let events = broker.events()
            var client = try await RawMQTTClient.connected(port: broker.port, clientID: "oversized")
            try await client.send(.publish(MQTTPublishPacket(topic: "t", payload: Array(repeating: 7, count: 2000))))
            #expect(await client.isClosedByPeer())
            _ = await events.first {
                if case .clientDisconnected("oversized", _) = $0 { return true }
                return false
            }
        }
        let dropped = handler.entries.first { $0.message == "client dropped" }
        #expect(dropped?.level == .notice)
        #expect(dropped?.metadata["client"] == "oversized")
        #expect(
            dropped?.metadata["reason"]
                == "protocol violation: packet of 2006 bytes exceeds the maximum packet size of 1024"
        )
    }

    @Test func connectionsBeyondTheLimitAreClosedAtOnce() async throws {
        let handler = InMemoryLogHandler()
        let configuration = MQTTBroker.Configuration(
            maximumConnections: 2,
            logger: CoatyLogger(label: "broker", level: .info, handler: handler)
        )
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            var first = try await RawMQTTClient.connected(port: broker.port, clientID: "first")
            let second = try await RawMQTTClient.connected(port: broker.port, clientID: "second")
            var third = try await RawMQTTClient.connect(port: broker.port)
            #expect(await third.isClosedByPeer())
            try await first.send(.pingreq)
            #expect(try await first.receivePacket() == .pingresp)
            second.close()
        }
        #expect(handler.entries.contains { $0.message == "connection refused: too many connections" })
    }

    /// Two clients each send 60 KiB of a 64 KiB PUBLISH against a broker-wide bound of 100 KiB: one is
    /// disconnected, the other finishes its packet and is served.
    @Test func unfinishedPacketsAreBoundedBrokerWide() async throws {
        let configuration = MQTTBroker.Configuration(
            maximumPacketSize: 64 * 1024,
            maximumUnfinishedPacketBytes: 100 * 1024
        )
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            let packet = try MQTTPacket.publish(
                MQTTPublishPacket(
                    topic: "t",
                    payload: Array(repeating: 1, count: 64 * 1024 - 16),
                    qos: .atLeastOnce,
                    packetID: 1
                )
            ).encoded()
            let head = Array(packet.prefix(60 * 1024))
            let tail = Array(packet.dropFirst(60 * 1024))
            var clients = [
                try await RawMQTTClient.connected(port: broker.port, clientID: "slow-upload-1"),
                try await RawMQTTClient.connected(port: broker.port, clientID: "slow-upload-2"),
            ]
            for client in clients { try await client.send(head) }
            var closed: [Bool] = []
            for index in clients.indices { closed.append(await clients[index].isClosedByPeer()) }
            #expect(closed.filter { $0 }.count == 1)
            guard let survivor = closed.firstIndex(of: false) else { return }
            try await clients[survivor].send(tail)
            #expect(try await clients[survivor].receivePacket() == .puback(1))
        }
    }
}
