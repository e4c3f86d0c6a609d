import CoatyBroker
import CoatyMQTTPackets
import CoatySockets
import Glibc
import Testing

/// Hostile and broken clients: malformed and oversized packets, abrupt disconnects, slow consumers and
/// many connections. The broker must survive, stay bounded, and keep serving everyone else.
@Suite(.timeLimit(.minutes(3)))
struct RobustnessTests {
    /// A connected client that subscribed to `filter`, for checking that others are unaffected.
    private func bystander(port: Int, filter: String = "health/#") async throws -> RawMQTTClient {
        var client = try await RawMQTTClient.connected(
            port: port,
            clientID: "bystander-\(UInt32.random(in: 0...UInt32.max))"
        )
        try await client.subscribe(filter, qos: .atLeastOnce)
        return client
    }

    private func expectAlive(_ client: inout RawMQTTClient) async throws {
        try await client.send(.pingreq)
        #expect(try await client.receivePacket() == .pingresp)
    }

    @Test func oversizedPacketIsRefusedFromItsHeader() async throws {
        try await MQTTBroker.withRunning(configuration: .init(maximumPacketSize: 1024)) { broker in
            var bystander = try await self.bystander(port: broker.port)
            var client = try await RawMQTTClient.connected(port: broker.port, clientID: "big")
            // Announce a 100 MB PUBLISH; the broker must close after the header, without buffering.
            try await client.send([0x30, 0x80, 0x80, 0x80, 0x30, 0x00, 0x01, 0x61])
            #expect(await client.isClosedByPeer())
            // A packet just under the limit is fine.
            var fits = try await RawMQTTClient.connected(port: broker.port, clientID: "fits")
            try await fits.send(
                .publish(MQTTPublishPacket(topic: "health/x", payload: Array(repeating: 1, count: 1000)))
            )
            try await self.expectAlive(&fits)
            guard case .publish(let delivered) = try await bystander.receivePacket() else {
                Issue.record("expected the delivery")
                return
            }
            #expect(delivered.payload.count == 1000)
        }
    }

    @Test(
        arguments: [
            [0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],  // remaining length of 5 bytes
            [0x36, 0x05, 0x00, 0x01, 0x61, 0x00, 0x01],  // QoS 3
            [0x82, 0x00],  // SUBSCRIBE with no payload
            [0x30, 0x05, 0x00, 0x03, 0x61, 0x2B, 0x62],  // wildcard in a PUBLISH topic
            [0x30, 0x04, 0x00, 0x02, 0xED, 0xA0],  // U+D800 in a topic
            [0x10, 0x0C, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x3C, 0x00, 0x00],  // second CONNECT
            [0xF0, 0x00],  // reserved packet type 15
            [0x20, 0x02, 0x00, 0x00],  // CONNACK from a client
            [0x62, 0x02, 0x00],  // truncated PUBREL followed by EOF (half close below)
        ] as [[UInt8]]
    )
    func malformedPacketDisconnectsOnlyTheSender(packet: [UInt8]) async throws {
        try await MQTTBroker.withRunning { broker in
            var bystander = try await self.bystander(port: broker.port)
            var client = try await RawMQTTClient.connected(port: broker.port, clientID: "malformed")
            try await client.send(packet)
            client.connection.shutdownOutput()
            #expect(await client.isClosedByPeer())
            try await self.expectAlive(&bystander)
        }
    }

    @Test func randomGarbageNeverCrashesTheBroker() async throws {
        try await MQTTBroker.withRunning(configuration: .init(maximumPacketSize: 4096)) { broker in
            var bystander = try await self.bystander(port: broker.port)
            var generator = SystemRandomNumberGenerator()
            for round in 0..<200 {
                var client = try await RawMQTTClient.connect(port: broker.port)
                // Half the rounds start with a valid CONNECT, so the garbage reaches the packet handlers.
                if round.isMultiple(of: 2) {
                    try await client.send(.connect(MQTTConnectPacket(clientID: "fuzz\(round)")))
                }
                let garbage = (0..<Int.random(in: 1...64, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                try? await client.send(garbage)
                client.connection.shutdownOutput()
                // The broker either closes or, for input that happens to be valid, replies; never hangs.
                while let bytes = try? await client.readSome(timeout: .seconds(3)), !bytes.isEmpty {}
                client.close()
            }
            try await self.expectAlive(&bystander)
            var late = try await RawMQTTClient.connected(port: broker.port, clientID: "after-fuzz")
            try await self.expectAlive(&late)
        }
    }

    /// MQTT allows a topic of 65,535 empty levels. A subscription and a publish of 60,000 `/` each used
    /// to overflow the stack of the trie's recursive match and kill the broker (signal 11); the broker now
    /// admits at most 201 levels, as mosquitto does, and closes a connection that sends more.
    @Test func topicsAndFiltersDeeperThan201LevelsCloseOnlyTheSender() async throws {
        try await MQTTBroker.withRunning { broker in
            let deepest = String(repeating: "/", count: 200)
            // 201 levels are admitted, for filters and topics alike.
            var subscriber = try await RawMQTTClient.connected(port: broker.port, clientID: "deep-subscriber")
            try await subscriber.send(
                .subscribe(
                    MQTTSubscribePacket(
                        packetID: 1,
                        subscriptions: [MQTTSubscription(filter: deepest, qos: .atMostOnce)]
                    )
                )
            )
            #expect(
                try await subscriber.receivePacket()
                    == .suback(MQTTSubAckPacket(packetID: 1, returnCodes: [.granted(.atMostOnce)]))
            )
            let publisher = try await RawMQTTClient.connected(port: broker.port, clientID: "deep-publisher")
            try await publisher.send(.publish(MQTTPublishPacket(topic: deepest, payload: [1])))
            guard case .publish(let delivered) = try await subscriber.receivePacket() else {
                Issue.record("expected the delivery at 201 levels")
                return
            }
            #expect(delivered.topic == deepest)

            let tooDeep = String(repeating: "/", count: 201)
            let huge = String(repeating: "/", count: 60_000)
            let refused: [MQTTPacket] = [
                .subscribe(
                    MQTTSubscribePacket(
                        packetID: 2,
                        subscriptions: [MQTTSubscription(filter: tooDeep, qos: .atMostOnce)]
                    )
                ),
                .subscribe(
                    MQTTSubscribePacket(packetID: 2, subscriptions: [MQTTSubscription(filter: huge, qos: .atMostOnce)])
                ),
                .unsubscribe(MQTTUnsubscribePacket(packetID: 3, filters: [tooDeep])),
                .publish(MQTTPublishPacket(topic: tooDeep, payload: [2])),
                .publish(MQTTPublishPacket(topic: huge, payload: [3])),
            ]
            // Each client stays open until the end, so that a deep filter admitted by mistake would still be
            // in place when the deep topic is published.
            var clients: [RawMQTTClient] = []
            for (index, packet) in refused.enumerated() {
                var client = try await RawMQTTClient.connected(port: broker.port, clientID: "too-deep-\(index)")
                try await client.send(packet)
                #expect(await client.isClosedByPeer(), "packet \(index) was admitted")
                clients.append(client)
            }
            var will = try await RawMQTTClient.connect(port: broker.port)
            try await will.send(
                .connect(
                    MQTTConnectPacket(
                        clientID: "too-deep-will",
                        cleanSession: true,
                        keepAliveSeconds: 60,
                        will: MQTTWill(topic: tooDeep, payload: [4], qos: .atMostOnce, retain: false)
                    )
                )
            )
            #expect(await will.isClosedByPeer())
            // The broker still serves, and nothing of the refused packets reached the subscriber.
            try await self.expectAlive(&subscriber)
            #expect(clients.count == refused.count)
        }
    }

    @Test func abruptDisconnectsReleaseSessions() async throws {
        try await MQTTBroker.withRunning { broker in
            let events = broker.events()
            var bystander = try await self.bystander(port: broker.port)
            let count = 100
            for index in 0..<count {
                var client = try await RawMQTTClient.connected(port: broker.port, clientID: "abrupt\(index)")
                try await client.subscribe("a/\(index)/#", qos: .exactlyOnce)
                // Close in the middle of a packet.
                try await client.send([0x30, 0x10, 0x00, 0x03])
                client.close()
            }
            var disconnected = 0
            for await event in events {
                if case .clientDisconnected(let id, _) = event, id.hasPrefix("abrupt") { disconnected += 1 }
                if disconnected == count { break }
            }
            let statistics = broker.statistics
            #expect(statistics.connections == 1)
            #expect(statistics.sessions == 1)
            #expect(statistics.subscriptions == 1)
            try await self.expectAlive(&bystander)
        }
    }

    @Test func slowQoS0ConsumerIsBoundedAndDoesNotStallOthers() async throws {
        let bound = 200
        try await MQTTBroker.withRunning(configuration: .init(maximumQueuedMessagesPerClient: bound)) { broker in
            // The slow consumer subscribes and then never reads again.
            var slow = try await RawMQTTClient.connected(port: broker.port, clientID: "slow")
            try await slow.subscribe("flood", qos: .atMostOnce)
            var publisher = try await RawMQTTClient.connected(port: broker.port, clientID: "flooder")
            let payload = [UInt8](repeating: 0x55, count: 16 * 1024)
            // 4,000 × 16 KiB = 64 MiB, far beyond the socket buffers; QoS 1 so the flooder is paced by PUBACKs.
            for index in 0..<4000 {
                try await publisher.send(
                    .publish(
                        MQTTPublishPacket(
                            topic: "flood",
                            payload: payload,
                            qos: .atLeastOnce,
                            packetID: UInt16(index % 60_000 + 1)
                        )
                    )
                )
                #expect(try await publisher.receivePacket() == .puback(UInt16(index % 60_000 + 1)))
            }
            let depths = try #require(broker.queueDepths(clientID: "slow"))
            #expect(depths.socket <= bound)
            #expect(broker.statistics.droppedMessages > 0)
            // Everyone else is served.
            var other = try await RawMQTTClient.connected(port: broker.port, clientID: "other")
            try await self.expectAlive(&other)
            try await self.expectAlive(&publisher)
            slow.close()
        }
    }

    /// Large QoS 0 messages for a client that stops reading are bounded by bytes, not only by count:
    /// 600 × 64 KiB (38 MiB) against a bound of 1,000 messages and 256 KiB.
    @Test func slowQoS0ConsumerIsBoundedByBytes() async throws {
        let configuration = MQTTBroker.Configuration(maximumQueuedBytesPerClient: 256 * 1024)
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            var slow = try await RawMQTTClient.connected(port: broker.port, clientID: "slow")
            try await slow.subscribe("large", qos: .atMostOnce)
            var publisher = try await RawMQTTClient.connected(port: broker.port, clientID: "producer")
            let payload = [UInt8](repeating: 0x55, count: 64 * 1024)
            for index in 1...600 {
                let packetID = UInt16(index)
                try await publisher.send(
                    .publish(MQTTPublishPacket(topic: "large", payload: payload, qos: .atLeastOnce, packetID: packetID))
                )
                #expect(try await publisher.receivePacket() == .puback(packetID))
            }
            // Three messages of 5 + 65,536 bytes fit in 256 KiB, a fourth does not.
            let depths = try #require(broker.queueDepths(clientID: "slow"))
            #expect(depths.socket <= 3)
            #expect(broker.statistics.droppedMessages > 0)
            try await self.expectAlive(&publisher)
            slow.close()
        }
    }

    @Test func slowQoS1ConsumerKeepsAFullQueueWhileAFastOneGetsEverything() async throws {
        let bound = 100
        let inFlight = 10
        let configuration = MQTTBroker.Configuration(
            maximumQueuedMessagesPerClient: bound,
            maximumInFlightMessagesPerClient: inFlight
        )
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            var slow = try await RawMQTTClient.connected(port: broker.port, clientID: "slow", cleanSession: false)
            try await slow.subscribe("work", qos: .atLeastOnce)
            var fast = try await RawMQTTClient.connected(port: broker.port, clientID: "fast")
            try await fast.subscribe("work", qos: .atLeastOnce)
            var publisher = try await RawMQTTClient.connected(port: broker.port, clientID: "producer")
            let total = 1000
            for index in 1...total {
                try await publisher.send(
                    .publish(
                        MQTTPublishPacket(
                            topic: "work",
                            payload: Array("\(index)".utf8),
                            qos: .atLeastOnce,
                            packetID: UInt16(index)
                        )
                    )
                )
                #expect(try await publisher.receivePacket() == .puback(UInt16(index)))
                guard case .publish(let delivered) = try await fast.receivePacket() else {
                    Issue.record("fast subscriber expected a PUBLISH")
                    return
                }
                #expect(delivered.payload == Array("\(index)".utf8))
                try await fast.send(.puback(delivered.packetID ?? 0))
            }
            let depths = try #require(broker.queueDepths(clientID: "slow"))
            #expect(depths.inFlight == inFlight)
            #expect(depths.session == bound)
            #expect(broker.statistics.droppedMessages == total - inFlight - bound)
            // When the slow consumer finally reads, it gets the window, then the newest queued messages.
            var first: [String] = []
            for _ in 0..<(inFlight + 1) {
                guard case .publish(let message) = try await slow.receivePacket() else { continue }
                first.append(String(decoding: message.payload, as: UTF8.self))
                try await slow.send(.puback(message.packetID ?? 0))
            }
            #expect(first.prefix(inFlight) == ArraySlice((1...inFlight).map(String.init)))
            #expect(first.last == "\(total - bound + 1)")
        }
    }

    @Test func thousandConcurrentConnections() async throws {
        Self.raiseDescriptorLimit(to: 4096)
        try await MQTTBroker.withRunning { broker in
            let port = broker.port
            let count = 1000
            var publisher = try await RawMQTTClient.connected(port: port, clientID: "announcer")
            try await withThrowingTaskGroup(of: Void.self) { group in
                let ready = AsyncStream.makeStream(of: Void.self)
                for index in 0..<count {
                    group.addTask {
                        var client = try await RawMQTTClient.connected(port: port, clientID: "many\(index)")
                        try await client.send(
                            .subscribe(
                                MQTTSubscribePacket(
                                    packetID: 1,
                                    subscriptions: [MQTTSubscription(filter: "all/+", qos: .atLeastOnce)]
                                )
                            )
                        )
                        _ = try await client.receivePacket(timeout: .seconds(30))
                        ready.continuation.yield()
                        let packet = try await client.receivePacket(timeout: .seconds(60))
                        guard case .publish(let publish) = packet else {
                            Issue.record("client \(index) expected a PUBLISH, got \(packet)")
                            return
                        }
                        #expect(publish.payload == Array("hello all".utf8))
                        try await client.send(.puback(publish.packetID ?? 0))
                        try await client.send(.disconnect)
                        client.close()
                    }
                }
                var subscribed = 0
                for await _ in ready.stream {
                    subscribed += 1
                    if subscribed == count { break }
                }
                #expect(broker.statistics.connections == count + 1)
                try await publisher.send(
                    .publish(
                        MQTTPublishPacket(
                            topic: "all/x",
                            payload: Array("hello all".utf8),
                            qos: .atLeastOnce,
                            packetID: 9
                        )
                    )
                )
                #expect(try await publisher.receivePacket(timeout: .seconds(30)) == .puback(9))
                try await group.waitForAll()
            }
            try await self.expectAlive(&publisher)
        }
    }

    /// Raises the soft descriptor limit towards the hard one: 1,000 clients plus 1,000 server sockets.
    static func raiseDescriptorLimit(to wanted: rlim_t) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < wanted else { return }
        limit.rlim_cur = min(wanted, limit.rlim_max)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
