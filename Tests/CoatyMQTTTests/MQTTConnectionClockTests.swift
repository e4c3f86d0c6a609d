import CoatyCommunication
import CoatyCore
import CoatyMQTTPackets
import CoatySockets
import CoatyTransport
import TestSupport
import Testing

@testable import CoatyMQTT

/// `MQTTConnection`'s timers on a ``ManualClock``: keep-alive, the acknowledgement watchdog and the
/// connect timeout fire when the test moves the time, with no real waiting.
@Suite(.timeLimit(.minutes(1)))
struct MQTTConnectionClockTests {
    private func connection(
        over stream: ScriptedStream,
        clock: ManualClock,
        keepAlive: Duration = .zero,
        acknowledgementTimeout: Duration? = nil,
        onMessage: @escaping @Sendable (TransportMessage) -> Void = { _ in }
    ) -> MQTTConnection {
        let connection = MQTTConnection(
            socket: stream,
            broker: MQTTBrokerAddress(host: "scripted"),
            configuration: .init(keepAlive: keepAlive, acknowledgementTimeout: acknowledgementTimeout, clock: clock),
            onMessage: onMessage
        )
        connection.acceptWithoutHandshake()
        return connection
    }

    /// Runs the connection's reader, writer and keep-alive, moves the clock on by half its keep-alive to
    /// the first PINGREQ and waits until it is written, then runs `body`; returns once the three
    /// tasks have ended.
    private func afterFirstPing(
        _ connection: MQTTConnection,
        over stream: ScriptedStream,
        clock: ManualClock,
        _ body: () async throws -> Void
    ) async throws {
        let pingreq = try MQTTPacket.pingreq.encoded()
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await connection.runReader(decoder: MQTTPacketDecoder()) }
            group.addTask { await connection.runWriter() }
            group.addTask { await connection.runKeepAlive() }
            await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(Int(connection.configuration.keepAliveSeconds)) / 2)
            await stream.waitUntilWritten { $0 == pingreq }
            try await body()
        }
    }

    @Test func aMissingPingRespClosesTheConnectionAtTheDeadline() async throws {
        let stream = ScriptedStream()
        stream.openGate()
        let clock = ManualClock()
        let connection = self.connection(over: stream, clock: clock, keepAlive: .seconds(10))
        try await self.afterFirstPing(connection, over: stream, clock: clock) {
            await clock.waitForSleepers(count: 1)
            #expect(connection.failure == nil)
            clock.advance(by: .seconds(5))
            await connection.waitUntilClosed()
        }
        #expect(connection.failure?.code == .connectionLost)
        #expect(connection.failure?.message.contains("PINGRESP") == true)
        #expect(clock.now.offset == .seconds(10))
    }

    @Test func anAnsweredPingKeepsTheConnectionPastTheDeadline() async throws {
        let stream = ScriptedStream()
        stream.openGate()
        let clock = ManualClock()
        let (messages, received) = AsyncStream.makeStream(of: TransportMessage.self)
        let connection = self.connection(over: stream, clock: clock, keepAlive: .seconds(10)) { received.yield($0) }
        let pingreq = try MQTTPacket.pingreq.encoded()
        let marker = MQTTPublishPacket(topic: "after/pingresp", payload: [1], qos: .atMostOnce)
        try await self.afterFirstPing(connection, over: stream, clock: clock) {
            // The reader handles packets in order: once the PUBLISH after the PINGRESP is delivered,
            // the PINGRESP was handled.
            stream.feed(try MQTTPacket.pingresp.encoded() + MQTTPacket.publish(marker).encoded())
            var iterator = messages.makeAsyncIterator()
            #expect(await iterator.next()?.topic == "after/pingresp")
            await clock.waitForSleepers(count: 1)
            // At the first PINGREQ's deadline (10 s) the connection lives on and sends the next one,
            // half a keep-alive after the PINGRESP; then the keep-alive sleeps until that one's
            // deadline, 15 s, which the test reaches only after closing the connection, to let the
            // keep-alive see that and end.
            clock.advance(by: .seconds(5))
            await stream.waitUntilWritten { $0 == pingreq + pingreq }
            await clock.waitForSleepers(count: 1)
            #expect(connection.failure == nil)
            connection.fail(TransportError(.connectionClosed, "the test is over"))
            clock.advance(by: .seconds(5))
        }
        #expect(connection.failure?.code == .connectionClosed)
    }

    @Test func anUnacknowledgedSubscribeClosesTheConnectionAfterTwoLooks() async throws {
        let stream = ScriptedStream()
        stream.openGate()
        let clock = ManualClock()
        let connection = self.connection(over: stream, clock: clock, acknowledgementTimeout: .seconds(2))
        let outcome = try await withThrowingTaskGroup(of: TransportError.Code?.self) { group in
            group.addTask {
                await connection.runWriter()
                return nil
            }
            group.addTask {
                await connection.runAcknowledgementWatchdog()
                return nil
            }
            group.addTask {
                do {
                    try await connection.subscribe(to: [try TopicFilter("never/answered")])
                    return nil
                } catch {
                    return (error as? TransportError)?.code
                }
            }
            await stream.waitUntilWritten { !$0.isEmpty }
            for _ in 0..<2 {
                await clock.waitForSleepers(count: 1)
                clock.advance(by: .seconds(1))
            }
            #expect(connection.failure == nil)
            await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(1))
            var outcome: TransportError.Code?
            for try await result in group {
                if let result { outcome = result }
            }
            return outcome
        }
        #expect(outcome == .connectionLost)
        #expect(connection.failure?.message.contains("no SUBACK") == true)
    }

    @Test func noConnAckWithinTheConnectTimeoutOnTheTestClock() async throws {
        let fake = try FakeBroker()
        defer { fake.listener.close() }
        let clock = ManualClock()
        let transport = MQTTTransport(
            configuration: .init(brokerURL: fake.url, connectTimeout: .seconds(30), clock: clock)
        )
        try await withThrowingTaskGroup { group in
            group.addTask {
                let session = try await fake.accept()
                defer { session.close() }
                _ = try await session.read()  // the CONNECT, never answered
                await clock.waitForSleepers(count: 1)
                clock.advance(by: .seconds(30))
                _ = try await session.read()
            }
            await #expect {
                try await transport.withConnection(.init(clientID: "slow"), onMessage: { _ in }) { _ in }
            } throws: {
                ($0 as? TransportError)?.code == .timedOut
            }
            try await group.waitForAll()
        }
    }
}
