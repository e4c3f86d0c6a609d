import CoatyBroker
import CoatyMQTTPackets
import TestSupport
import Testing

/// Broker behaviour over real sockets: sessions, wills, keep-alive, takeover, credentials, lifecycle.
@Suite(.timeLimit(.minutes(1)))
struct MQTTBrokerTests {
    private func subscribe(_ client: inout RawMQTTClient, _ filter: String, qos: MQTTQoS, packetID: UInt16 = 1)
        async throws
    {
        let suback = try await client.subscribe(filter, qos: qos, packetID: packetID)
        #expect(suback == .suback(MQTTSubAckPacket(packetID: packetID, returnCodes: [.granted(qos)])))
    }

    private func publish(
        _ client: RawMQTTClient,
        _ topic: String,
        _ payload: String,
        qos: MQTTQoS = .atMostOnce,
        packetID: UInt16? = nil,
        retain: Bool = false
    ) async throws {
        try await client.send(
            .publish(
                MQTTPublishPacket(
                    topic: topic,
                    payload: Array(payload.utf8),
                    qos: qos,
                    retain: retain,
                    packetID: packetID
                )
            )
        )
    }

    @Test func bindReportsTheChosenPort() throws {
        let broker = try MQTTBroker.bind(port: 0)
        #expect(broker.port > 0)
        #expect(throws: BrokerError.self) { try MQTTBroker.bind(port: 70_000) }
        #expect {
            try MQTTBroker.bind(configuration: .init(maximumInFlightMessagesPerClient: 0))
        } throws: { ($0 as? BrokerError)?.code == .invalidConfiguration }
    }

    @Test func cancellingRunClosesConnectionsAndFinishesEvents() async throws {
        let broker = try MQTTBroker.bind()
        let events = broker.events()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await broker.run() }
            var client = try await RawMQTTClient.connected(port: broker.port, clientID: "c")
            group.cancelAll()
            #expect(await client.isClosedByPeer(timeout: .seconds(5)))
            await #expect(throws: CancellationError.self) { try await group.next() }
        }
        var seen: [BrokerEvent] = []
        for await event in events { seen.append(event) }
        #expect(seen.count == 2)
        if case .clientConnected(let clientID, _, let clean) = seen.first {
            #expect(clientID == "c" && clean)
        } else {
            Issue.record("expected a connect event first, got \(seen)")
        }
        #expect(seen.last == .clientDisconnected(clientID: "c", reason: "broker stopping"))
        // A stopped broker's new event streams finish at once.
        for await _ in broker.events() { Issue.record("no events after stop") }
    }

    @Test func keepAliveExpiryClosesAndPublishesWill() async throws {
        let clock = ManualClock()
        try await MQTTBroker.withRunning(configuration: ManualBrokerClock.configuration(clock: clock)) { broker in
            var watcher = try await RawMQTTClient.connected(port: broker.port, clientID: "watcher")
            try await self.subscribe(&watcher, "status/#", qos: .atLeastOnce)
            let will = MQTTWill(topic: "status/silent", payload: Array("gone".utf8), qos: .atLeastOnce)
            var silent = try await RawMQTTClient.connected(
                port: broker.port,
                clientID: "silent",
                keepAlive: 1,
                will: will
            )
            // Nothing is sent. Just short of 1.5 s the connection stays; the sweeper's next look, 250 ms
            // later, closes it and the will goes out.
            await ManualBrokerClock.advance(clock, by: .milliseconds(1499))
            #expect(await !silent.isClosedByPeer(timeout: .milliseconds(200)))
            await ManualBrokerClock.advance(clock, by: .milliseconds(250))
            let packet = try await watcher.receivePacket(timeout: .seconds(5))
            guard case .publish(let publish) = packet else {
                Issue.record("expected the will, got \(packet)")
                return
            }
            #expect(publish.topic == "status/silent")
            #expect(publish.payload == Array("gone".utf8))
            #expect(await silent.isClosedByPeer())
        }
    }

    @Test func pingsKeepAKeepAliveConnectionOpenAndSilenceClosesIt() async throws {
        let clock = ManualClock()
        try await MQTTBroker.withRunning(configuration: ManualBrokerClock.configuration(clock: clock)) { broker in
            // A keep-alive of 2 s allows 3 s of silence. Four gaps of 2.9 s, each ended by a PINGREQ:
            // 11.6 s in all, and the connection stays. The broker counts a packet before it answers
            // it, so the PINGRESP means the deadline has moved.
            var client = try await RawMQTTClient.connected(port: broker.port, clientID: "pinger", keepAlive: 2)
            for _ in 0..<4 {
                await ManualBrokerClock.advance(clock, by: .milliseconds(2900))
                try await client.send(.pingreq)
                #expect(try await client.receivePacket() == .pingresp)
            }
            await ManualBrokerClock.advance(clock, by: .milliseconds(3000))
            #expect(await client.isClosedByPeer())
        }
    }

    @Test func connectTimeoutClosesSilentSockets() async throws {
        try await MQTTBroker.withRunning(configuration: .init(connectTimeout: .milliseconds(200))) { broker in
            var client = try await RawMQTTClient.connect(port: broker.port)
            #expect(await client.isClosedByPeer(timeout: .seconds(3)))
        }
    }

    /// Sends one byte of a never-ending packet every 50 ms, like a slowloris client, until the broker
    /// closes the connection or `limit` passes; returns whether it closed.
    private func trickleUntilClosed(_ client: inout RawMQTTClient, limit: Duration) async -> Bool {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            try? await client.send([0x00])
            if await client.isClosedByPeer(timeout: .milliseconds(50)) { return true }
        }
        return false
    }

    @Test func aTrickleOfBytesDoesNotExtendTheConnectTimeout() async throws {
        try await MQTTBroker.withRunning(configuration: .init(connectTimeout: .milliseconds(300))) { broker in
            var client = try await RawMQTTClient.connect(port: broker.port)
            // A CONNECT announcing about 1 MiB, which never completes.
            try await client.send([0x10, 0xFB, 0xFF, 0x3F, 0x00, 0x04])
            #expect(await self.trickleUntilClosed(&client, limit: .seconds(5)))
        }
    }

    @Test func aTrickleOfBytesDoesNotExtendTheKeepAlive() async throws {
        try await MQTTBroker.withRunning { broker in
            var client = try await RawMQTTClient.connected(port: broker.port, clientID: "trickle", keepAlive: 1)
            // A PUBLISH announcing about 1 MiB, which never completes: no Control Packet arrives, so
            // the broker closes the connection 1.5 s after CONNECT.
            try await client.send([0x30, 0xFB, 0xFF, 0x3F, 0x00, 0x01, 0x61])
            #expect(await self.trickleUntilClosed(&client, limit: .seconds(6)))
        }
    }

    @Test func gracefulDisconnectDiscardsTheWill() async throws {
        try await MQTTBroker.withRunning { broker in
            var watcher = try await RawMQTTClient.connected(port: broker.port, clientID: "watcher")
            try await self.subscribe(&watcher, "#", qos: .atMostOnce)
            let will = MQTTWill(topic: "will", payload: [1])
            var polite = try await RawMQTTClient.connected(port: broker.port, clientID: "polite", will: will)
            try await polite.send(.disconnect)
            #expect(await polite.isClosedByPeer())
            let rude = try await RawMQTTClient.connected(port: broker.port, clientID: "rude", will: will)
            rude.close()
            let packet = try await watcher.receivePacket()
            #expect(packet == .publish(MQTTPublishPacket(topic: "will", payload: [1])))
            // Only one will arrived: the next packet is the PINGRESP.
            try await watcher.send(.pingreq)
            #expect(try await watcher.receivePacket() == .pingresp)
        }
    }

    /// Replies to packets sent before a DISCONNECT in the same write still go out, as mosquitto sends
    /// them, before the connection closes.
    @Test func repliesQueuedBeforeADisconnectAreFlushed() async throws {
        try await MQTTBroker.withRunning { broker in
            var client = try await RawMQTTClient.connect(port: broker.port)
            var bytes: [UInt8] = []
            for packet: MQTTPacket in [
                .connect(MQTTConnectPacket(clientID: "pipelined")),
                .publish(MQTTPublishPacket(topic: "t", payload: [1], qos: .atLeastOnce, packetID: 7)),
                .disconnect,
            ] {
                bytes += try packet.encoded()
            }
            try await client.send(bytes)
            #expect(try await client.receivePacket() == .connack(MQTTConnAckPacket()))
            #expect(try await client.receivePacket() == .puback(7))
            #expect(await client.isClosedByPeer())
        }
    }

    @Test func takeoverClosesTheOldConnectionAndPublishesItsWill() async throws {
        try await MQTTBroker.withRunning { broker in
            var watcher = try await RawMQTTClient.connected(port: broker.port, clientID: "watcher")
            try await self.subscribe(&watcher, "will/#", qos: .atMostOnce)
            var first = try await RawMQTTClient.connected(
                port: broker.port,
                clientID: "same",
                will: MQTTWill(topic: "will/same", payload: [1])
            )
            var second = try await RawMQTTClient.connected(port: broker.port, clientID: "same")
            #expect(await first.isClosedByPeer())
            #expect(try await watcher.receivePacket() == .publish(MQTTPublishPacket(topic: "will/same", payload: [1])))
            try await second.send(.pingreq)
            #expect(try await second.receivePacket() == .pingresp)
        }
    }

    @Test func persistentSessionQueuesWhileOfflineAndRedeliversUnacknowledged() async throws {
        try await MQTTBroker.withRunning { broker in
            var subscriber = try await RawMQTTClient.connected(
                port: broker.port,
                clientID: "durable",
                cleanSession: false
            )
            try await self.subscribe(&subscriber, "jobs/+", qos: .exactlyOnce)
            let publisher = try await RawMQTTClient.connected(port: broker.port, clientID: "producer")
            try await self.publish(publisher, "jobs/1", "one", qos: .atMostOnce)
            // Received but not acknowledged, then the connection drops.
            try await self.publish(publisher, "jobs/2", "two", qos: .atLeastOnce, packetID: 7)
            let first = try await subscriber.receivePacket()
            #expect(first == .publish(MQTTPublishPacket(topic: "jobs/1", payload: Array("one".utf8))))
            let unacknowledged = try await subscriber.receivePacket()
            #expect(
                unacknowledged
                    == .publish(
                        MQTTPublishPacket(topic: "jobs/2", payload: Array("two".utf8), qos: .atLeastOnce, packetID: 1)
                    )
            )
            // Observed before the close: a stream made after it could miss the disconnect and wait for ever.
            let events = broker.events()
            subscriber.close()
            _ = await events.first { if case .clientDisconnected("durable", _) = $0 { true } else { false } }
            // While offline: QoS 1 and 2 are queued, QoS 0 is not.
            var publisherReader = publisher
            try await self.publish(publisher, "jobs/3", "three", qos: .atMostOnce)
            try await self.publish(publisher, "jobs/4", "four", qos: .exactlyOnce, packetID: 8)
            #expect(try await publisherReader.receivePacket(where: { $0 == .pubrec(8) }) == .pubrec(8))
            #expect(broker.queueDepths(clientID: "durable")?.session == 1)
            var resumed = try await RawMQTTClient.connected(
                port: broker.port,
                clientID: "durable",
                cleanSession: false,
                sessionPresent: true
            )
            #expect(
                try await resumed.receivePacket()
                    == .publish(
                        MQTTPublishPacket(
                            topic: "jobs/2",
                            payload: Array("two".utf8),
                            qos: .atLeastOnce,
                            dup: true,
                            packetID: 1
                        )
                    )
            )
            #expect(
                try await resumed.receivePacket()
                    == .publish(
                        MQTTPublishPacket(topic: "jobs/4", payload: Array("four".utf8), qos: .exactlyOnce, packetID: 2)
                    )
            )
            try await resumed.send(.puback(1))
            try await resumed.send(.pubrec(2))
            #expect(try await resumed.receivePacket() == .pubrel(2))
            try await resumed.send(.pubcomp(2))
            try await resumed.send(.pingreq)
            #expect(try await resumed.receivePacket() == .pingresp)
            #expect(broker.queueDepths(clientID: "durable").map { $0.session + $0.inFlight } == 0)
        }
    }

    @Test func retainedMessagesBeyondTheByteBoundAreDeliveredButNotRetained() async throws {
        // Without the retained `$SYS` topics, which would not fit either.
        let configuration = MQTTBroker.Configuration(maximumRetainedBytes: 50, systemTopicInterval: nil)
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            var publisher = try await RawMQTTClient.connected(port: broker.port, clientID: "producer")
            try await self.publish(
                publisher,
                "big",
                String(repeating: "x", count: 100),
                qos: .atLeastOnce,
                packetID: 1,
                retain: true
            )
            #expect(try await publisher.receivePacket() == .puback(1))
            try await self.publish(publisher, "small", "y", qos: .atLeastOnce, packetID: 2, retain: true)
            #expect(try await publisher.receivePacket() == .puback(2))
            #expect(broker.statistics.retainedMessages == 1)
            #expect(broker.statistics.refusedRetainedMessages == 1)
            // Retained messages follow the SUBACK in topic order: "big" would come before "small".
            var subscriber = try await RawMQTTClient.connected(port: broker.port, clientID: "late")
            try await self.subscribe(&subscriber, "#", qos: .atMostOnce)
            #expect(
                try await subscriber.receivePacket()
                    == .publish(MQTTPublishPacket(topic: "small", payload: Array("y".utf8), retain: true))
            )
        }
    }

    @Test func overlappingSubscriptionsDeliverOnceAtTheHighestQoS() async throws {
        try await MQTTBroker.withRunning { broker in
            var client = try await RawMQTTClient.connected(port: broker.port, clientID: "overlap")
            try await self.subscribe(&client, "a/+", qos: .atMostOnce, packetID: 1)
            try await self.subscribe(&client, "a/#", qos: .atLeastOnce, packetID: 2)
            try await self.publish(client, "a/b", "x", qos: .atLeastOnce, packetID: 5)
            var received: [MQTTPacket] = []
            for _ in 0..<2 { received.append(try await client.receivePacket()) }
            #expect(received.contains(.puback(5)))
            #expect(
                received.contains(
                    .publish(MQTTPublishPacket(topic: "a/b", payload: [0x78], qos: .atLeastOnce, packetID: 1))
                )
            )
            try await client.send(.pingreq)
            #expect(try await client.receivePacket() == .pingresp)
        }
    }

    @Test func subscriptionsBeyondTheClientLimitAreRefusedInTheSuback() async throws {
        let configuration = MQTTBroker.Configuration(maximumSubscriptionsPerClient: 3)
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            var client = try await RawMQTTClient.connected(port: broker.port, clientID: "greedy")
            let filters = ["a", "b", "c", "d", "a"].map { MQTTSubscription(filter: $0, qos: .atLeastOnce) }
            try await client.send(.subscribe(MQTTSubscribePacket(packetID: 1, subscriptions: filters)))
            let granted = MQTTSubAckReturnCode.granted(.atLeastOnce)
            #expect(
                try await client.receivePacket()
                    == .suback(
                        MQTTSubAckPacket(packetID: 1, returnCodes: [granted, granted, granted, .failure, granted])
                    )
            )
            #expect(broker.statistics.subscriptions == 3)
            // The connection stays usable, and the granted filters deliver.
            try await self.publish(client, "c", "x")
            #expect(try await client.receivePacket() == .publish(MQTTPublishPacket(topic: "c", payload: [0x78])))
        }
    }

    @Test func offlineSessionsBeyondTheLimitAreDiscarded() async throws {
        let configuration = MQTTBroker.Configuration(maximumOfflineSessions: 2)
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            let events = broker.events()
            for index in 0..<5 {
                var client = try await RawMQTTClient.connected(
                    port: broker.port,
                    clientID: "durable\(index)",
                    cleanSession: false
                )
                try await self.subscribe(&client, "jobs/\(index)", qos: .atLeastOnce)
                try await client.send(.disconnect)
            }
            var disconnected = 0
            for await event in events {
                if case .clientDisconnected = event { disconnected += 1 }
                if disconnected == 5 { break }
            }
            let statistics = broker.statistics
            #expect(statistics.sessions == 2)
            #expect(statistics.subscriptions == 2)
            #expect(statistics.discardedSessions == 3)
            // The newest two resume; the oldest starts afresh.
            _ = try await RawMQTTClient.connected(
                port: broker.port,
                clientID: "durable4",
                cleanSession: false,
                sessionPresent: true
            )
            _ = try await RawMQTTClient.connected(port: broker.port, clientID: "durable0", cleanSession: false)
        }
    }

    @Test func credentialsAreChecked() async throws {
        let configuration = MQTTBroker.Configuration(credentials: .init(username: "user", password: "pass"))
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            for (username, password, code) in [
                (nil, nil, UInt8(5)), ("user", Array("nope".utf8), 4), ("other", Array("pass".utf8), 4),
                ("user", Array("pass".utf8), 0),
            ] as [(String?, [UInt8]?, UInt8)] {
                var client = try await RawMQTTClient.connect(port: broker.port)
                try await client.send(
                    .connect(MQTTConnectPacket(clientID: "auth", username: username, password: password))
                )
                try await client.expect([0x20, 0x02, 0x00, code])
                if code != 0 { #expect(await client.isClosedByPeer()) }
                client.close()
            }
        }
    }

    @Test func emptyClientIDGetsAnAssignedOne() async throws {
        try await MQTTBroker.withRunning { broker in
            let events = broker.events()
            _ = try await RawMQTTClient.connected(port: broker.port, clientID: "")
            let connected = await events.first { _ in true }
            guard case .clientConnected(let clientID, _, _) = connected else {
                Issue.record("expected a connect event")
                return
            }
            #expect(clientID.hasPrefix("coaty-broker-"))
        }
    }

    /// An assigned id must be unique [MQTT-3.1.3-6]: a client that chose the id the broker would assign
    /// next is not taken over by a client with an empty id.
    @Test func assignedClientIDSkipsIDsInUse() async throws {
        try await MQTTBroker.withRunning { broker in
            let events = broker.events()
            var first = try await RawMQTTClient.connected(port: broker.port, clientID: "coaty-broker-1")
            _ = try await RawMQTTClient.connected(port: broker.port, clientID: "")
            var iterator = events.makeAsyncIterator()
            var connected: [String] = []
            while connected.count < 2, let event = await iterator.next() {
                if case .clientConnected(let clientID, _, _) = event { connected.append(clientID) }
            }
            // The events may come in either order: a reader emits its event after the CONNACK is
            // queued, so the second client can be connected, and reported, first.
            #expect(connected.count == 2)
            #expect(connected.contains("coaty-broker-1"))
            #expect(Set(connected).count == 2, "the assigned id is the one in use: \(connected)")
            try await first.send(.pingreq)
            #expect(try await first.receivePacket() == .pingresp)
        }
    }
}

struct MQTTBrokerConfigurationTests {
    @Test(arguments: [15, 268_435_456])
    func packetSizeLimitsOutsideMQTTsRangeAreRejected(size: Int) {
        #expect {
            _ = try MQTTBroker.bind(configuration: .init(maximumPacketSize: size))
        } throws: { ($0 as? BrokerError)?.code == .invalidConfiguration }
    }
}
