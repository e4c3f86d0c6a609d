import CoatyBroker
import CoatyCore
import CoatyMQTTPackets
import CoatySockets
import Testing

/// Clients that stop reading stay bounded and are dropped, with the reason in the disconnect event
/// and the log.
@Suite(.timeLimit(.minutes(2)))
struct SlowConsumerTests {
    /// Waits for the disconnect of `clientID` and returns its reason.
    private func disconnectReason(of clientID: String, in events: BrokerEvents) async -> String? {
        let event = await events.first {
            if case .clientDisconnected(let id, _) = $0 { return id == clientID }
            return false
        }
        guard case .clientDisconnected(_, let reason) = event else { return nil }
        return reason
    }

    /// A client that keeps subscribing to a large retained message and never reads: the broker stops
    /// reading it once the replies fill the socket buffers and its queue, and drops it after 1.5 × its
    /// keep-alive of 1 s, logging why with its client id.
    @Test func clientThatNeverReadsIsDroppedAsSlowConsumer() async throws {
        let handler = InMemoryLogHandler()
        let configuration = MQTTBroker.Configuration(
            maximumUnreadBytesPerClient: 2 << 20,
            logger: CoatyLogger(label: "broker", level: .notice, handler: handler)
        )
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            let events = broker.events()
            let publisher = try await RawMQTTClient.connected(port: broker.port, clientID: "publisher")
            try await publisher.send(
                .publish(
                    MQTTPublishPacket(
                        topic: "large",
                        payload: Array(repeating: 1, count: 512 * 1024),
                        qos: .atLeastOnce,
                        retain: true,
                        packetID: 1
                    )
                )
            )
            var acknowledgement = publisher
            #expect(try await acknowledgement.receivePacket(timeout: .seconds(10)) == .puback(1))
            let client = try await RawMQTTClient.connected(port: broker.port, clientID: "deaf", keepAlive: 1)
            var requests: [UInt8] = []
            for index in 1...100 {
                try MQTTPacket.subscribe(
                    MQTTSubscribePacket(
                        packetID: UInt16(index),
                        subscriptions: [MQTTSubscription(filter: "large", qos: .atMostOnce)]
                    )
                ).encode(into: &requests)
            }
            let chunk = requests
            let connection = client.connection
            let reason = try await withThrowingTaskGroup(of: String?.self, returning: String?.self) { group in
                group.addTask {
                    // Writes until the broker closes the connection (or the writes stall for good).
                    while (try? await withTimeout(.seconds(5), { try await connection.write(chunk) })) != nil {}
                    return nil
                }
                group.addTask { await self.disconnectReason(of: "deaf", in: events) }
                defer { group.cancelAll() }
                while let result = try await group.next() {
                    if let result { return result }
                }
                return nil
            }
            client.close()
            let text = try #require(reason)
            #expect(text.hasPrefix("slow consumer: "), "\(text)")
            #expect(text.contains("keep-alive"), "\(text)")
        }
        let dropped = handler.entries.first { $0.message == "client dropped" && $0.metadata["client"] == "deaf" }
        #expect(dropped?.metadata["reason"]?.hasPrefix("slow consumer: ") == true)
    }

    /// A QoS 1 subscriber that never reads, sent more large messages than the socket buffers hold:
    /// dropped once its unread bytes would exceed the bound, while the publisher goes on.
    @Test func subscriberThatNeverReadsIsDroppedAtTheUnreadBound() async throws {
        let configuration = MQTTBroker.Configuration(maximumUnreadBytesPerClient: 1 << 20)
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            let events = broker.events()
            var subscriber = try await RawMQTTClient.connected(port: broker.port, clientID: "stuck")
            try await subscriber.subscribe("large", qos: .atLeastOnce)
            var publisher = try await RawMQTTClient.connected(port: broker.port, clientID: "producer")
            let payload = [UInt8](repeating: 0x55, count: 512 * 1024)
            async let reason = self.disconnectReason(of: "stuck", in: events)
            var index: UInt16 = 1
            while broker.statistics.connections == 2, index < 200 {
                try await publisher.send(
                    .publish(MQTTPublishPacket(topic: "large", payload: payload, qos: .atLeastOnce, packetID: index))
                )
                #expect(try await publisher.receivePacket(timeout: .seconds(10)) == .puback(index))
                index += 1
            }
            let text = await reason
            #expect(text?.hasPrefix("slow consumer: ") == true, "\(text ?? "none")")
            #expect(text?.contains("exceed the bound of 1048576") == true, "\(text ?? "none")")
            try await publisher.send(.pingreq)
            #expect(try await publisher.receivePacket() == .pingresp)
            subscriber.close()
        }
    }
}
