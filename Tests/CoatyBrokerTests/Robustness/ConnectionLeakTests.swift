import CoatyBroker
import CoatyMQTTPackets
import Testing

/// Connections that come and go must leave nothing behind: no session, subscription, write queue,
/// deadline or buffered bytes, and their objects must be freed once the broker stops.
@Suite(.timeLimit(.minutes(2)))
struct ConnectionLeakTests {
    private final class WeakReference: @unchecked Sendable {
        weak var object: AnyObject?
        init(_ object: AnyObject) { self.object = object }
    }

    @Test func connectDisconnectCyclesLeaveNothingBehind() async throws {
        let cycles = 60
        var outboxes: [WeakReference] = []
        try await MQTTBroker.withRunning { broker in
            let events = broker.events()
            for index in 0..<cycles {
                var client = try await RawMQTTClient.connected(port: broker.port, clientID: "cycle\(index)")
                try await client.subscribe("cycle/\(index)", qos: .atLeastOnce)
                // A QoS 1 round trip through the broker, so queues and in-flight state were used.
                try await client.send(
                    .publish(MQTTPublishPacket(topic: "cycle/\(index)", payload: [1], qos: .atLeastOnce, packetID: 7))
                )
                var packets: [MQTTPacket] = []
                while packets.count < 2 { packets.append(try await client.receivePacket()) }
                for case .publish(let delivered) in packets {
                    try await client.send(.puback(delivered.packetID ?? 0))
                }
                outboxes += broker.attachedOutboxes.map(WeakReference.init)
                switch index % 3 {
                case 0: try await client.send(.disconnect)
                case 1: client.close()
                default:
                    // Closed in the middle of a packet, whose bytes the reader held.
                    try await client.send([0x30, 0x10, 0x00, 0x03])
                    client.close()
                }
            }
            var disconnected = 0
            for await event in events {
                if case .clientDisconnected = event { disconnected += 1 }
                if disconnected == cycles { break }
            }
            let statistics = broker.statistics
            #expect(statistics.connections == 0)
            #expect(statistics.sessions == 0)
            #expect(statistics.subscriptions == 0)
            let resources = broker.connectionResources
            #expect(resources.outboxes == 0)
            #expect(resources.watches == 0)
            #expect(resources.unfinishedPacketBytes == 0)
        }
        // The broker has stopped, so every connection's tasks have ended.
        #expect(outboxes.count >= cycles)
        #expect(outboxes.allSatisfy { $0.object == nil })
    }
}
