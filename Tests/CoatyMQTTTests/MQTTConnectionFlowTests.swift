import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyMQTTPackets
import CoatySockets
import CoatyTransport
import Synchronization
import Testing

/// The client's publish, subscribe and acknowledgement flows against a scripted broker.
extension MQTTConnectionFakeBrokerTests {
    @Test func qos2DuplicateIsDeliveredOnceAndTheFlowCompletes() async throws {
        let (acks, ackStream) = AsyncStream<MQTTPacket>.makeStream()
        let delivered = try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                let publish = MQTTPublishPacket(topic: "q2", payload: [7], qos: .exactlyOnce, packetID: 9)
                try await session.send(.publish(publish))
                var duplicate = publish
                duplicate.dup = true
                try await session.send(.publish(duplicate))
                try await session.send(.pubrel(9))
                // Then a new message reusing the identifier: delivered again.
                try await session.send(.publish(.init(topic: "q2", payload: [8], qos: .exactlyOnce, packetID: 9)))
                try await session.send(.pubrel(9))
                while let packet = try await session.read() {
                    if packet == .disconnect { break }
                    ackStream.yield(packet)
                }
                ackStream.finish()
            },
            client: { transport in
                let inbox = Inbox()
                return try await transport.withConnection(.init(clientID: "q2"), onMessage: inbox.onMessage) { _ in
                    await inbox.next(2).map(\.payload)
                }
            }
        )
        #expect(delivered == [[7], [8]])
        var received: [MQTTPacket] = []
        for await packet in acks { received.append(packet) }
        // The client may have disconnected before answering the second PUBREL; the prefix is fixed.
        #expect(Array(received.prefix(4)) == [.pubrec(9), .pubrec(9), .pubcomp(9), .pubrec(9)])
    }

    @Test func qos1AndQos2PublishFlowsWithTheInFlightWindow() async throws {
        let (log, logStream) = AsyncStream<MQTTPacket>.makeStream()
        try await self.withFakeBroker(
            configure: { $0.maximumInFlight = 2 },
            broker: { session in
                try await session.acceptConnect()
                var held: [UInt16] = []
                var inFlightIDs: Set<UInt16> = []
                while let packet = try await session.read() {
                    logStream.yield(packet)
                    switch packet {
                    case .publish(let publish):
                        let id = try #require(publish.packetID)
                        #expect(id != 0)
                        #expect(inFlightIDs.insert(id).inserted, "identifier \(id) reused while in flight")
                        #expect(inFlightIDs.count <= 2, "more publications in flight than the window")
                        if publish.qos == .exactlyOnce {
                            try await session.send(.pubrec(id))
                        } else {
                            // Hold acknowledgements until the window is full, then release them all.
                            held.append(id)
                            if inFlightIDs.count == 2 || publish.payload == [0xFF] {
                                for id in held {
                                    inFlightIDs.remove(id)
                                    try await session.send(.puback(id))
                                }
                                held = []
                            }
                        }
                    case .pubrel(let id):
                        inFlightIDs.remove(id)
                        try await session.send(.pubcomp(id))
                    case .disconnect:
                        logStream.finish()
                        return
                    default:
                        break
                    }
                }
            },
            client: { transport in
                try await transport.withConnection(.init(clientID: "window"), onMessage: { _ in }) { connection in
                    try await withThrowingTaskGroup { group in
                        for index in 0..<10 {
                            group.addTask {
                                try await connection.publish(
                                    TransportMessage(topic: "w/\(index)", payload: [UInt8(index)], qos: .atLeastOnce)
                                )
                            }
                        }
                        try await group.waitForAll()
                    }
                    try await connection.publish(TransportMessage(topic: "w/last", payload: [0xFF], qos: .atLeastOnce))
                    try await connection.publish(TransportMessage(topic: "w/q2", payload: [2], qos: .exactlyOnce))
                }
            }
        )
        var publishes = 0
        var sawPubRel = false
        for await packet in log {
            if case .publish = packet { publishes += 1 }
            if case .pubrel = packet { sawPubRel = true }
        }
        #expect(publishes == 12)
        #expect(sawPubRel)
    }

    @Test func subAckFailureIsSubscriptionRefused() async throws {
        let error = try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                guard case .subscribe(let subscribe) = try await session.read() else { return }
                try await session.send(
                    .suback(.init(packetID: subscribe.packetID, returnCodes: [.granted(.atMostOnce), .failure]))
                )
                _ = try await session.read()
            },
            client: { transport in
                try await transport.withConnection(.init(clientID: "s"), onMessage: { _ in }) { connection in
                    await #expect(throws: TransportError.self) {
                        try await connection.subscribe(to: [TopicFilter("ok/#"), TopicFilter("refused/#")])
                    }
                }
            }
        )
        #expect(error?.code == .subscriptionRefused)
    }

    /// A broker that answers PINGREQ but never a SUBSCRIBE does not keep the subscriber waiting: the
    /// acknowledgement watchdog closes the connection after the timeout (at most 1½ times it).
    ///
    /// The keep-alive (3 s: a PINGREQ after 1.5 s idle, answered within 1.5 s) leaves the watchdog's
    /// 0.6–0.9 s well clear. With 1 s, a PINGREQ went out at 0.5 s with 0.5 s to be answered, and on a
    /// loaded machine the keep-alive sometimes closed the connection first.
    @Test func anUnacknowledgedSubscribeClosesTheConnectionAfterTheTimeout() async throws {
        let clock = ContinuousClock()
        let outcome = Mutex<(error: TransportError, elapsed: Duration)?>(nil)
        _ = try await self.withFakeBroker(
            configure: {
                // A keep-alive far beyond the timeout: on a starved machine a short one could run out
                // first and close the connection for another reason.
                $0.keepAlive = .seconds(60)
                $0.acknowledgementTimeout = .milliseconds(600)
            },
            broker: { session in
                try await session.acceptConnect()
                while let packet = try? await session.read() {
                    if packet == .pingreq { try await session.send(.pingresp) }
                }
            },
            client: { transport in
                // The connection's loss ends withConnection too.
                await #expect(throws: TransportError.self) {
                    try await transport.withConnection(.init(clientID: "s"), onMessage: { _ in }) { connection in
                        let start = clock.now
                        do {
                            try await connection.subscribe(to: [TopicFilter("never/acknowledged")])
                        } catch let error as TransportError {
                            outcome.withLock { $0 = (error, clock.now - start) }
                        }
                    }
                }
            }
        )
        let (error, waited) = try #require(outcome.withLock { $0 })
        #expect(error.code == .connectionLost)
        #expect(error.message.contains("no SUBACK for packet"))
        #expect(waited >= .milliseconds(600))
        #expect(waited < .seconds(5), "noticed within 1.5 × the timeout, with slack for a loaded machine")
    }

    /// Exchanges that are answered, even slowly, never trip the watchdog, however long the connection
    /// lives: only one exchange's own wait counts.
    @Test func slowButAnsweredExchangesKeepTheConnection() async throws {
        let count = try await self.withFakeBroker(
            configure: { $0.acknowledgementTimeout = .milliseconds(800) },
            broker: { session in
                try await session.acceptConnect()
                while let packet = try await session.read() {
                    guard case .subscribe(let subscribe) = packet else { continue }
                    try await Task.sleep(for: .milliseconds(50))  // a slow broker, not synchronisation
                    try await session.send(
                        .suback(.init(packetID: subscribe.packetID, returnCodes: [.granted(.atMostOnce)]))
                    )
                }
            },
            client: { transport in
                try await transport.withConnection(.init(clientID: "s"), onMessage: { _ in }) { connection in
                    // About 2 s in all, more than twice the timeout.
                    for index in 0..<40 { try await connection.subscribe(to: [TopicFilter("slow/\(index)")]) }
                    return 40
                }
            }
        )
        #expect(count == 40)
    }

    /// Subscriptions and unsubscriptions handed over without waiting go out in order, ahead of what
    /// follows; their acknowledgements (a refusal too) are taken without a waiter and free the packet
    /// identifiers, and the connection goes on working.
    @Test func acknowledgementsWithoutWaitersAreTakenInOrder() async throws {
        try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                guard case .subscribe(let subscribe) = try await session.read() else {
                    Issue.record("expected SUBSCRIBE first")
                    return
                }
                #expect(subscribe.subscriptions.map(\.filter) == ["refused/#"])
                guard case .unsubscribe(let unsubscribe) = try await session.read() else {
                    Issue.record("expected UNSUBSCRIBE second")
                    return
                }
                #expect(unsubscribe.filters == ["gone/#"])
                guard case .publish(let publish) = try await session.read() else {
                    Issue.record("expected PUBLISH third")
                    return
                }
                #expect(publish.topic == "after")
                try await session.send(.suback(.init(packetID: subscribe.packetID, returnCodes: [.failure])))
                try await session.send(.unsuback(unsubscribe.packetID))
                // A waited-for subscription afterwards is answered as usual.
                guard case .subscribe(let next) = try await session.read() else {
                    Issue.record("expected a second SUBSCRIBE")
                    return
                }
                try await session.send(.suback(.init(packetID: next.packetID, returnCodes: [.granted(.atMostOnce)])))
                #expect(try await session.read() == .disconnect)
            },
            client: { transport in
                try await transport.withConnection(.init(clientID: "nowait"), onMessage: { _ in }) { connection in
                    #expect(try connection.subscribeWithoutWaiting(to: [TopicFilter("refused/#")]))
                    #expect(try connection.unsubscribeWithoutWaiting(from: [TopicFilter("gone/#")]))
                    #expect(try connection.publishWithoutWaiting(TransportMessage(topic: "after", payload: [1])))
                    try await connection.subscribe(to: [TopicFilter("ok/#")])
                }
            }
        )
    }

    @Test func invalidTopicIsRejectedBeforeSending() async throws {
        try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                #expect(try await session.read() == .disconnect)
            },
            client: { transport in
                try await transport.withConnection(.init(clientID: "t"), onMessage: { _ in }) { connection in
                    let error = await #expect(throws: TransportError.self) {
                        try await connection.publish(TransportMessage(topic: "a/+/b", payload: []))
                    }
                    #expect(error?.code == .invalidArgument)
                }
            }
        )
    }

    @Test func invalidBrokerURLs() async {
        for url in ["mqtts://host/path", "wss://host:0", "host:1883", "mqtt://", "mqtt://host:99999", "mqtt://host:x"] {
            let error = await #expect(throws: TransportError.self) {
                try await MQTTTransport(brokerURL: url).withConnection(.init(clientID: "x"), onMessage: { _ in }) { _ in
                }
            }
            #expect(error?.code == .invalidConfiguration)
        }
    }
}
