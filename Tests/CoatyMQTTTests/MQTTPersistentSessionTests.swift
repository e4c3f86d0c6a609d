import CoatyBroker
import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyMQTTPackets
import CoatySockets
import CoatyTransport
import Testing

/// The client's half of a persistent session (clean session 0) across connections, against a scripted
/// broker that accepts one connection after another on the same port.
@Suite(.timeLimit(.minutes(1)))
struct MQTTPersistentSessionTests {
    private static let a = TransportMessage(topic: "s/a", payload: [1], qos: .atLeastOnce)
    private static let b = TransportMessage(topic: "s/b", payload: [2], qos: .exactlyOnce)
    private static let c = TransportMessage(topic: "s/c", payload: [3], qos: .exactlyOnce)

    private func transport(_ fake: FakeBroker, cleanSession: Bool = false) -> MQTTTransport {
        MQTTTransport(
            configuration: .init(brokerURL: fake.url, cleanSession: cleanSession, connectTimeout: .seconds(5))
        )
    }

    /// Runs one connection: `broker` on the accepted session while `client` connects with `transport`.
    private func connection<Result: Sendable>(
        _ fake: FakeBroker,
        broker: @escaping @Sendable (FakeSession) async throws -> Void,
        client: () async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup { group in
            group.addTask {
                let session = try await fake.accept()
                defer { session.close() }
                try await broker(session)
            }
            let result = try await client()
            try await group.waitForAll()
            return result
        }
    }

    /// Reads the CONNECT, checks that it asks for a persistent session, and answers with `sessionPresent`.
    private static func accept(_ session: FakeSession, sessionPresent: Bool, cleanSession: Bool = false) async throws {
        guard case .connect(let connect) = try await session.read() else {
            Issue.record("no CONNECT")
            return
        }
        #expect(connect.cleanSession == cleanSession)
        try await session.send(.connack(.init(sessionPresent: sessionPresent, returnCode: .accepted)))
    }

    private static func publishPacket(_ packet: MQTTPacket?) throws -> MQTTPublishPacket {
        guard case .publish(let publish) = packet else { throw TransportError(.protocolViolation, "not a PUBLISH") }
        return publish
    }

    /// First connection: publishes `messages` one after another, each once the broker has read the
    /// previous one; the broker acknowledges the last QoS 2 message up to its PUBREL and then drops
    /// the connection. Returns the PUBLISHes the broker read and the errors the publishers got.
    private func loseConnectionWithUnacknowledgedPublications(
        _ fake: FakeBroker,
        _ transport: MQTTTransport,
        _ messages: [TransportMessage],
        cleanSession: Bool = false
    ) async throws -> (published: [MQTTPublishPacket], errors: [TransportError]) {
        let (seen, seenContinuation) = AsyncStream<MQTTPublishPacket>.makeStream()
        return try await self.connection(
            fake,
            broker: { session in
                try await Self.accept(session, sessionPresent: false, cleanSession: cleanSession)
                var last: MQTTPublishPacket?
                for _ in messages {
                    let publish = try Self.publishPacket(try await session.read())
                    seenContinuation.yield(publish)
                    last = publish
                }
                seenContinuation.finish()
                if let last, last.qos == .exactlyOnce, let id = last.packetID {
                    try await session.send(.pubrec(id))
                    #expect(try await session.read() == .pubrel(id))
                }
                // Dropped without acknowledging anything else.
            },
            client: {
                var published: [MQTTPublishPacket] = []
                var errors: [TransportError] = []
                await #expect(throws: TransportError.self) {
                    try await transport.withMQTTConnection(.init(clientID: "keeper"), onMessage: { _ in }) {
                        connection in
                        errors = await withTaskGroup { group in
                            var iterator = seen.makeAsyncIterator()
                            for message in messages {
                                group.addTask { () -> TransportError? in
                                    do {
                                        try await connection.publish(message)
                                        return nil
                                    } catch {
                                        return error as? TransportError
                                    }
                                }
                                if let publish = await iterator.next() { published.append(publish) }
                            }
                            var errors: [TransportError] = []
                            for await error in group { errors.append(contentsOf: error.map { [$0] } ?? []) }
                            return errors
                        }
                    }
                }
                return (published, errors)
            }
        )
    }

    @Test func unacknowledgedExchangesAreSentAgainInOrderWhenTheSessionResumes() async throws {
        let fake = try FakeBroker()
        defer { fake.listener.close() }
        let transport = self.transport(fake)
        let (published, errors) = try await self.loseConnectionWithUnacknowledgedPublications(
            fake,
            transport,
            [Self.a, Self.b, Self.c]
        )
        try #require(published.map(\.topic) == ["s/a", "s/b", "s/c"])
        #expect(published.allSatisfy { !$0.dup })
        // Each caller hears that its publication was not lost.
        #expect(errors.count == 3)
        #expect(errors.allSatisfy { $0.code == .connectionLost && $0.message.contains("sent again") })
        #expect(
            errors.allSatisfy { ($0.underlying as? MQTTPublicationKept)?.connectionFailure.code == .connectionLost }
        )
        let ids = published.map { $0.packetID ?? 0 }

        // Second connection, the broker kept the session: PUBLISH a and b again with DUP and their
        // identifiers, then c's PUBREL, in the order first sent, before anything new.
        try await self.connection(
            fake,
            broker: { session in
                try await Self.accept(session, sessionPresent: true)
                let resentA = try Self.publishPacket(try await session.read())
                let resentB = try Self.publishPacket(try await session.read())
                #expect(try await session.read() == .pubrel(ids[2]))
                var expectedA = published[0]
                expectedA.dup = true
                var expectedB = published[1]
                expectedB.dup = true
                #expect(resentA == expectedA)
                #expect(resentB == expectedB)
                try await session.send(.puback(ids[0]))
                try await session.send(.pubrec(ids[1]))
                try await session.send(.pubcomp(ids[2]))
                var newPublish: MQTTPublishPacket?
                var sawRelease = false
                while newPublish == nil || !sawRelease {
                    switch try await session.read() {
                    case .pubrel(let id):
                        #expect(id == ids[1])
                        sawRelease = true
                    case .publish(let publish): newPublish = publish
                    case let other: Issue.record("unexpected \(String(describing: other))"); return
                    }
                }
                let id = try #require(newPublish?.packetID)
                #expect(newPublish?.dup == false)
                #expect(!ids[1...].contains(id), "identifier \(id) reused while b or c was in flight")
                try await session.send(.pubcomp(ids[1]))
                try await session.send(.puback(id))
                #expect(try await session.read() == .disconnect)
            },
            client: {
                try await transport.withConnection(.init(clientID: "keeper"), onMessage: { _ in }) { connection in
                    try await connection.publish(TransportMessage(topic: "s/d", payload: [4], qos: .atLeastOnce))
                }
            }
        )

        // Third connection: everything was acknowledged, so nothing is sent again.
        try await self.connection(
            fake,
            broker: { session in
                try await Self.accept(session, sessionPresent: true)
                #expect(try await session.read() == .disconnect)
            },
            client: { try await transport.withConnection(.init(clientID: "keeper"), onMessage: { _ in }) { _ in } }
        )
    }

    @Test func aQoS2MessageTheBrokerSendsAgainIsNotDeliveredTwice() async throws {
        let fake = try FakeBroker()
        defer { fake.listener.close() }
        let transport = self.transport(fake)
        let first = MQTTPublishPacket(topic: "in/q2", payload: [5], qos: .exactlyOnce, packetID: 5)
        let inbox = Inbox()
        // First connection: the message is delivered, our PUBREC is read, then the link drops before
        // the broker's PUBREL.
        try await self.connection(
            fake,
            broker: { session in
                try await Self.accept(session, sessionPresent: false)
                try await session.send(.publish(first))
                #expect(try await session.read() == .pubrec(5))
            },
            client: {
                _ = await #expect(throws: TransportError.self) {
                    try await transport.withMQTTConnection(.init(clientID: "receiver"), onMessage: inbox.onMessage) {
                        connection in await connection.waitUntilClosed()
                    }
                }
            }
        )
        #expect(await inbox.next(1).map(\.payload) == [[5]])

        // Second connection: the broker, unsure whether the PUBREC came, sends the PUBLISH again.
        try await self.connection(
            fake,
            broker: { session in
                try await Self.accept(session, sessionPresent: true)
                var again = first
                again.dup = true
                try await session.send(.publish(again))
                #expect(try await session.read() == .pubrec(5))
                try await session.send(.pubrel(5))
                #expect(try await session.read() == .pubcomp(5))
                // The identifier is free again: a new message with it is delivered.
                try await session.send(.publish(.init(topic: "in/q2", payload: [6], qos: .exactlyOnce, packetID: 5)))
                // The client leaves as soon as it has the message: its PUBREC may or may not go out first,
                // but nothing follows DISCONNECT [MQTT-3.14.4-1].
                var packets: [MQTTPacket] = []
                while let packet = try await session.read() { packets.append(packet) }
                #expect(packets == [.pubrec(5), .disconnect] || packets == [.disconnect])
            },
            client: {
                try await transport.withConnection(.init(clientID: "receiver"), onMessage: inbox.onMessage) { _ in
                    #expect(await inbox.next(1).map(\.payload) == [[6]])
                }
            }
        )
    }

    @Test func aBrokerWithoutTheSessionGetsNothingAgain() async throws {
        let fake = try FakeBroker()
        defer { fake.listener.close() }
        let transport = self.transport(fake)
        _ = try await self.loseConnectionWithUnacknowledgedPublications(fake, transport, [Self.a, Self.c])
        let inbox = Inbox()
        try await self.connection(
            fake,
            broker: { session in
                // Session present 0: the client discards its half, so it sends nothing again.
                try await Self.accept(session, sessionPresent: false)
                try await session.send(.publish(.init(topic: "in", payload: [7], qos: .atLeastOnce, packetID: 1)))
                #expect(try await session.read() == .puback(1))
                #expect(try await session.read() == .disconnect)
            },
            client: {
                try await transport.withConnection(.init(clientID: "keeper"), onMessage: inbox.onMessage) { _ in
                    _ = await inbox.next(1)
                }
            }
        )
    }

    @Test func aCleanSessionKeepsNothing() async throws {
        let fake = try FakeBroker()
        defer { fake.listener.close() }
        let transport = self.transport(fake, cleanSession: true)
        let (_, errors) = try await self.loseConnectionWithUnacknowledgedPublications(
            fake,
            transport,
            [Self.a],
            cleanSession: true
        )
        #expect(errors.count == 1)
        #expect(errors.allSatisfy { $0.code == .connectionLost && !($0.underlying is MQTTPublicationKept) })
        try await self.connection(
            fake,
            broker: { session in
                // Even a broker that claims a session gets nothing again.
                try await Self.accept(session, sessionPresent: true, cleanSession: true)
                #expect(try await session.read() == .disconnect)
            },
            client: { try await transport.withConnection(.init(clientID: "keeper"), onMessage: { _ in }) { _ in } }
        )
    }

    /// The same exchange end to end through the embedded broker (and through mosquitto in
    /// `MQTTTransportMosquittoTests`).
    @Test(arguments: [QualityOfService.atLeastOnce, .exactlyOnce])
    func aPublicationLostWithTheLinkIsSentAgainThroughTheEmbeddedBroker(qos: QualityOfService) async throws {
        try await MQTTBroker.withRunning { broker in
            try await checkPublicationLostWithTheLinkIsSentAgain(brokerPort: broker.port, qos: qos)
        }
    }
}
