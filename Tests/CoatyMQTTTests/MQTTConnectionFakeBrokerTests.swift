import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyMQTTPackets
import CoatySockets
import CoatyTransport
import Synchronization
import TestSupport
import Testing

/// The client against a scripted broker that sends crafted bytes.
@Suite(.timeLimit(.minutes(1)))
struct MQTTConnectionFakeBrokerTests {
    /// Runs `broker` on the accepted connection while `client` uses a transport connected to it.
    func withFakeBroker<Result: Sendable>(
        configure: (inout MQTTTransport.Configuration) -> Void = { _ in },
        broker: @escaping @Sendable (FakeSession) async throws -> Void,
        client: (MQTTTransport) async throws -> Result
    ) async throws -> Result {
        let fake = try FakeBroker()
        defer { fake.listener.close() }
        var configuration = MQTTTransport.Configuration(brokerURL: fake.url, connectTimeout: .seconds(5))
        configure(&configuration)
        let transport = MQTTTransport(configuration: configuration)
        return try await withThrowingTaskGroup { group in
            group.addTask {
                let session = try await fake.accept()
                defer { session.close() }
                try await broker(session)
            }
            let result = try await client(transport)
            try await group.waitForAll()
            return result
        }
    }

    /// Connects, waits until the connection dies, and returns the error `withConnection` throws.
    func lossError(_ transport: MQTTTransport) async -> TransportError? {
        await #expect(throws: TransportError.self) {
            try await transport.withMQTTConnection(.init(clientID: "victim"), onMessage: { _ in }) { connection in
                await connection.waitUntilClosed()
            }
        }
    }

    @Test func connectCarriesCoatySettings() async throws {
        let will = TransportMessage(topic: "coaty/3/ns/DAD/1234", payload: Array(#"{"objectIds":["1234"]}"#.utf8))
        let (stream, continuation) = AsyncStream<MQTTConnectPacket>.makeStream()
        try await self.withFakeBroker(
            configure: {
                $0.username = "user"; $0.password = "secret"
            },
            broker: { session in
                let connect = try #require(try await session.acceptConnect())
                continuation.yield(connect)
                #expect(try await session.read() == .disconnect)
                #expect(try await session.read() == nil)
            },
            client: { transport in
                try await transport.withConnection(
                    .init(clientID: "Coaty111111111111411181", lastWill: will),
                    onMessage: { _ in }
                ) { _ in }
            }
        )
        var iterator = stream.makeAsyncIterator()
        let connect = try #require(await iterator.next())
        #expect(connect.clientID == "Coaty111111111111411181")
        #expect(connect.cleanSession)
        #expect(connect.keepAliveSeconds == 60)
        #expect(connect.protocolLevel == 4)
        #expect(connect.will == MQTTWill(topic: will.topic, payload: will.payload, qos: .atMostOnce, retain: false))
        #expect(connect.username == "user")
        #expect(connect.password == Array("secret".utf8))
    }

    @Test func refusedConnAckThrowsConnectionRefused() async throws {
        let error = try await self.withFakeBroker(
            broker: { session in
                _ = try await session.read()
                try await session.send(.connack(.init(returnCode: .notAuthorized)))
            },
            client: { transport in
                await #expect(throws: TransportError.self) {
                    try await transport.withConnection(.init(clientID: "refused"), onMessage: { _ in }) { _ in }
                }
            }
        )
        #expect(error?.code == .connectionRefused)
    }

    @Test func aRefusedTCPConnectionIsReportedWithItsCauseOnce() async throws {
        let port = try {
            let listener = try TCPListener.bind(port: 0)
            defer { listener.close() }
            return listener.port
        }()
        let transport = MQTTTransport(brokerURL: "mqtt://127.0.0.1:\(port)")
        let error = await #expect(throws: TransportError.self) {
            try await transport.withConnection(.init(clientID: "nobody-listens"), onMessage: { _ in }) { _ in }
        }
        #expect(error?.code == .connectFailed)
        #expect(error?.underlying is SocketError)
        let description = error.map(String.init(describing:)) ?? ""
        #expect(description.ranges(of: "Connection refused").count == 1, "\(description)")
    }

    @Test func noConnAckWithinTheConnectTimeout() async throws {
        let error = try await self.withFakeBroker(
            configure: { $0.connectTimeout = .milliseconds(300) },
            broker: { session in
                _ = try await session.read()
                _ = try? await session.read()  // the client gives up and closes
            },
            client: { transport in
                await #expect(throws: TransportError.self) {
                    try await transport.withConnection(.init(clientID: "slow"), onMessage: { _ in }) { _ in }
                }
            }
        )
        #expect(error?.code == .timedOut)
    }

    /// Crafted inbound bytes that must close the connection with a clear error.
    static let malformedInputs: [(name: String, bytes: [UInt8])] = [
        ("remaining length of 5 bytes", [0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]),
        ("reserved packet type 0", [0x00, 0x00]),
        ("PUBLISH with QoS 3", [0x36, 0x05, 0x00, 0x01, 0x61, 0x00, 0x01]),
        ("topic with invalid UTF-8", [0x30, 0x05, 0x00, 0x03, 0x61, 0xC3, 0x28]),
        ("topic with U+0000", [0x30, 0x04, 0x00, 0x02, 0x61, 0x00]),
        ("PUBACK with a body too long", [0x40, 0x03, 0x00, 0x01, 0x00]),
        ("PUBREL with wrong flags", [0x60, 0x02, 0x00, 0x01]),
    ]

    @Test(arguments: Self.malformedInputs.map(\.name))
    func malformedInboundPacketClosesTheConnection(name: String) async throws {
        let bytes = try #require(Self.malformedInputs.first { $0.name == name }).bytes
        let error = try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                try await session.sendRaw(bytes)
                _ = try? await session.read()  // until the client closes
            },
            client: { transport in await self.lossError(transport) }
        )
        #expect(error?.code == .connectionLost)
        let cause = try #require(error?.underlying as? TransportError)
        #expect(cause.code == .protocolViolation)
        #expect(cause.underlying is MQTTDecodingError)
    }

    @Test func oversizedPacketIsRefusedFromItsHeader() async throws {
        let error = try await self.withFakeBroker(
            configure: { $0.maximumPacketSize = 1024 },
            broker: { session in
                try await session.acceptConnect()
                // Only the header of a 100 MB PUBLISH: the client must not wait for (or buffer) the body.
                var header: [UInt8] = [0x30]
                try MQTTRemainingLength.encode(100_000_000, into: &header)
                try await session.sendRaw(header)
                _ = try? await session.read()
            },
            client: { transport in await self.lossError(transport) }
        )
        let cause = try #require(error?.underlying as? TransportError)
        #expect(cause.underlying as? MQTTDecodingError == .packetTooLarge(100_000_005))
    }

    @Test(arguments: [
        MQTTPacket.pingreq, .connack(.init()),
        .subscribe(.init(packetID: 1, subscriptions: [.init(filter: "a", qos: .atMostOnce)])),
    ])
    func protocolViolationByTheBrokerClosesTheConnection(packet: MQTTPacket) async throws {
        let error = try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                try await session.send(packet)
                _ = try? await session.read()
            },
            client: { transport in await self.lossError(transport) }
        )
        #expect(error?.code == .connectionLost)
        #expect((error?.underlying as? TransportError)?.code == .protocolViolation)
    }

    @Test func wrongAcknowledgementTypeIsAViolation() async throws {
        let error = try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                guard case .publish(let publish) = try await session.read(), let id = publish.packetID else {
                    Issue.record("expected a QoS 1 PUBLISH")
                    return
                }
                try await session.send(.pubrec(id))  // PUBREC for a QoS 1 message
                _ = try? await session.read()
            },
            client: { transport in
                await #expect(throws: TransportError.self) {
                    try await transport.withConnection(.init(clientID: "c"), onMessage: { _ in }) { connection in
                        try await connection.publish(TransportMessage(topic: "t", payload: [1], qos: .atLeastOnce))
                    }
                }
            }
        )
        #expect(error?.code == .connectionLost)
    }

    @Test func brokerClosingTheSocketIsConnectionLost() async throws {
        let error = try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                session.close()
            },
            client: { transport in await self.lossError(transport) }
        )
        #expect(error?.code == .connectionLost)
        // The loss is described once, not wrapped in a copy of itself.
        let message = try #require(error?.message)
        #expect("\(try #require(error))".ranges(of: message).count == 1)
    }

    /// After our DISCONNECT the broker may close the socket at once [MQTT-3.14.4]; the reader seeing
    /// that close is the expected end, not a loss (the embedded broker's interop test once had to
    /// tolerate it).
    @Test(arguments: 0..<5)
    func brokerClosingRightAfterDisconnectIsNoLoss(round: Int) async throws {
        try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                #expect(try await session.read() == .publish(.init(topic: "t", payload: [UInt8(round)])))
                #expect(try await session.read() == .disconnect)
            },
            client: { transport in
                try await transport.withConnection(.init(clientID: "leaving"), onMessage: { _ in }) { connection in
                    try await connection.publish(TransportMessage(topic: "t", payload: [UInt8(round)]))
                }
            }
        )
    }

    /// A graceful close returns once DISCONNECT is written, also when the broker keeps the socket open
    /// (it only SHOULD close it): the writer could write it before the closing task waited for that,
    /// and then the close took the whole flush timeout. The timeouts run on a manual clock that never
    /// moves, so such a missed wake-up hangs until the suite's time limit instead of passing after the
    /// timeout, and no real time is measured.
    @Test func aGracefulCloseDoesNotWaitForTheBrokerToClose() async throws {
        let clock = ManualClock()
        let closed = try await self.withFakeBroker(
            configure: { $0.clock = clock },
            broker: { session in
                try await session.acceptConnect()
                #expect(try await session.read() == .disconnect)
                #expect(try await session.read() == nil)  // the client closes; the broker never does
            },
            client: { transport in
                try await transport.withConnection(.init(clientID: "leaving"), onMessage: { _ in }) { _ in }
                return true
            }
        )
        #expect(closed)
        #expect(clock.now.offset == .zero)
    }

    /// A client that leaves right after a message arrives may not have acknowledged it yet; it must then
    /// not acknowledge it after its DISCONNECT, which is its last packet [MQTT-3.14.4-1].
    @Test(arguments: 0..<10)
    func nothingFollowsDisconnect(round: Int) async throws {
        try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                try await session.send(.publish(.init(topic: "t", payload: [1], qos: .atLeastOnce, packetID: 1)))
                var packets: [MQTTPacket] = []
                while let packet = try await session.read() { packets.append(packet) }
                #expect(packets == [.puback(1), .disconnect] || packets == [.disconnect], "round \(round)")
            },
            client: { transport in
                let inbox = Inbox()
                try await transport.withConnection(.init(clientID: "leaving"), onMessage: inbox.onMessage) { _ in
                    _ = await inbox.next(1)
                }
            }
        )
    }

    /// A broker that reads but never answers: the client sends one PINGREQ half a keep-alive after
    /// its last packet and gives up one keep-alive after it (within 1.5 × keep-alive), not earlier.
    /// On a manual clock, over a real socket, so no real time is measured.
    @Test func missingPingRespIsNoticedWithinOneAndAHalfKeepAlives() async throws {
        let clock = ManualClock()
        let (pings, ping) = AsyncStream<Void>.makeStream()
        let closedAt = try await self.withFakeBroker(
            configure: {
                $0.keepAlive = .seconds(4)
                $0.clock = clock
            },
            broker: { session in
                try await session.acceptConnect()
                // Read everything, answer nothing.
                while let packet = try? await session.read() {
                    if packet == .pingreq { ping.yield() }
                }
                ping.finish()
            },
            client: { transport in
                await #expect(throws: TransportError.self) {
                    try await transport.withMQTTConnection(.init(clientID: "victim"), onMessage: { _ in }) {
                        connection in
                        // The keep-alive and the acknowledgement watchdog sleep on the clock.
                        await clock.waitForSleepers(count: 2)
                        clock.advance(by: .seconds(2))
                        var iterator = pings.makeAsyncIterator()
                        #expect(await iterator.next() != nil, "no PINGREQ half a keep-alive after CONNECT")
                        await clock.waitForSleepers(count: 2)
                        #expect(connection.failure == nil, "closed before the PINGRESP's deadline")
                        clock.advance(by: .seconds(2))
                        await connection.waitUntilClosed()
                        #expect(connection.failure?.message.contains("PINGRESP") == true)
                    }
                }
                return clock.now.offset
            }
        )
        #expect(closedAt == .seconds(4))
        var extra = 0
        for await _ in pings { extra += 1 }
        #expect(extra == 0, "one PINGREQ while its PINGRESP is outstanding, no ping storm")
    }

    @Test func aTrickledPacketDoesNotKeepADeadBrokerAlive() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let (error, lost) = try await self.withFakeBroker(
            configure: { $0.keepAlive = .seconds(1) },
            broker: { session in
                try await session.acceptConnect()
                // The header of a PUBLISH of 16 MiB - 100 bytes, then one byte every 100 ms for at most
                // 30 s: bytes keep coming, but no packet ever completes and no PINGRESP is sent.
                try await session.sendRaw([0x30, 0x9C, 0xFF, 0xFF, 0x07])
                for _ in 0..<300 {
                    try await Task.sleep(for: .milliseconds(100))
                    do { try await session.sendRaw([0x00]) } catch { return }
                }
            },
            client: { transport in
                let error = await self.lossError(transport)
                return (error, clock.now)
            }
        )
        #expect(error?.code == .connectionLost)
        // One keep-alive after the CONNACK, about 1.5 s; a client that counted the trickled bytes would
        // stay connected for the trickle's 30 s. The bound leaves a loaded machine, where a full run
        // once took 5.3 s, a wide margin on both sides.
        #expect(lost - start < .seconds(15), "the keep-alive counted bytes of an unfinished packet")
    }

    @Test func aBrokerThatFloodsAndNeverReadsIsHeldBackByTCP() async throws {
        // QoS 1 PUBLISHes, each answered by a 4-byte PUBACK that this broker never reads. The client
        // must stop reading once its unsent acknowledgements pass its outbound high-water mark, so the
        // broker's writes block; before, it read on and its PUBACKs grew without bound.
        var batch: [UInt8] = []
        for index in 0..<10_000 {
            let id = UInt16(index % 65_535 + 1)
            batch += [0x32, 0x07, 0x00, 0x03, 0x61, 0x2F, 0x78, UInt8(id >> 8), UInt8(id & 0xFF)]
        }
        let flood = batch
        let (outcome, outcomes) = AsyncStream<(heldBack: Bool, bytes: Int)>.makeStream()
        _ = try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                let connection = session.connection
                var written = 0
                // 64 MiB: over seven million messages, far beyond what the kernel's buffers absorb.
                while written < 64 << 20 {
                    // A write that has not finished after 1 s is blocked: the client stopped reading.
                    let finished = try await withThrowingTaskGroup(of: Bool.self) { group in
                        group.addTask {
                            try await connection.write(flood)
                            return true
                        }
                        group.addTask {
                            try await Task.sleep(for: .seconds(1))
                            return false
                        }
                        let first = try await group.next() ?? false
                        group.cancelAll()
                        return first
                    }
                    guard finished else {
                        outcomes.yield((true, written))
                        outcomes.finish()
                        return
                    }
                    written += flood.count
                }
                outcomes.yield((false, written))
                outcomes.finish()
            },
            client: { transport in
                await #expect(throws: TransportError.self) {
                    try await transport.withConnection(.init(clientID: "flooded"), onMessage: { _ in }) {
                        connection in
                        // Until the broker gives up and closes the connection.
                        await connection.waitUntilClosed()
                        throw TransportError(.connectionLost, "closed")
                    }
                }
            }
        )
        var iterator = outcome.makeAsyncIterator()
        let result = try #require(await iterator.next())
        #expect(result.heldBack, "the client read all \(result.bytes) bytes and queued their PUBACKs")
    }
}
