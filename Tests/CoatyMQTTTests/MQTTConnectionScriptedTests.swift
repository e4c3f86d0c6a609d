import CoatyCommunication
import CoatyCore
import CoatyMQTTPackets
import CoatyTransport
import Synchronization
import Testing

@testable import CoatyMQTT

/// An `MQTTConnection` driven over a ``ScriptedStream``, for orderings a real socket cannot pin down.
@Suite(.timeLimit(.minutes(1)))
struct MQTTConnectionScriptedTests {
    /// A client that leaves while more than the outbound high-water mark waits for a broker that is
    /// not reading must still send its DISCONNECT once the broker reads again. A packet that arrived
    /// meanwhile made the reader wait for the buffer to drain, and that wait failed at once because
    /// the connection was closing: the reader failed the connection, which dropped the buffer with
    /// the DISCONNECT and the QoS 0 messages before it, so the broker published the will.
    @Test func aPacketArrivingWhileLeavingBehindAFullBufferKeepsTheDisconnect() async throws {
        let stream = ScriptedStream()
        let (received, receiver) = AsyncStream<TransportMessage>.makeStream()
        let connection = MQTTConnection(
            socket: stream,
            broker: MQTTBrokerAddress(host: "scripted"),
            configuration: .init(),
            onMessage: { receiver.yield($0) }
        )
        connection.acceptWithoutHandshake()
        let message = TransportMessage(topic: "t", payload: Array(repeating: 7, count: 64 << 10))
        var queued = 0
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await connection.runReader(decoder: MQTTPacketDecoder()) }
            group.addTask { await connection.runWriter() }
            #expect(try connection.publishWithoutWaiting(message))
            queued += 1
            // The writer holds its first batch at the gate; fill the buffer beyond the high-water mark.
            await stream.firstWriteStarted()
            while try connection.publishWithoutWaiting(message) { queued += 1 }
            group.addTask { await connection.disconnect() }
            // Once DISCONNECT is queued, publications are refused.
            while (try? connection.publishWithoutWaiting(message)) != nil {
                try Task.checkCancellation()
                await Task.yield()
            }
            stream.feed(try MQTTPacket.publish(.init(topic: "news", payload: [1])).encoded())
            var iterator = received.makeAsyncIterator()
            _ = await iterator.next()
            stream.openGate()
        }
        var decoder = MQTTPacketDecoder()
        decoder.append(stream.written)
        var packets: [MQTTPacket] = []
        while let packet = try decoder.next() { packets.append(packet) }
        #expect(packets.count == queued + 1)
        #expect(packets.last == .disconnect)
    }

    /// A QoS 0 publication waiting for a full outbound buffer to drain (a broker that stopped reading)
    /// ends when its task is cancelled, as QoS 1 and 2 publications and subscriptions do. It waited on
    /// until the buffer drained or the connection failed, up to a keep-alive later, and held up a
    /// `CommunicationManager` that was stopping.
    @Test func aQoS0PublicationWaitingForTheBufferToDrainEndsWhenCancelled() async throws {
        let stream = ScriptedStream()
        let connection = MQTTConnection(
            socket: stream,
            broker: MQTTBrokerAddress(host: "scripted"),
            configuration: .init(),
            onMessage: { _ in }
        )
        connection.acceptWithoutHandshake()
        let message = TransportMessage(topic: "t", payload: Array(repeating: 7, count: 64 << 10))
        let outcome: String = try await withThrowingTaskGroup { group in
            group.addTask {
                await connection.runWriter()
                return "writer ended"
            }
            #expect(try connection.publishWithoutWaiting(message))
            // The writer holds its first batch at the gate; fill the buffer beyond the high-water mark.
            await stream.firstWriteStarted()
            while try connection.publishWithoutWaiting(message) {}
            let publisher = Task {
                try await connection.publish(message)
            }
            // Cancelled once it waits, so that the cancellation handler is what ends the wait.
            while connection.waiters.count == 0 {
                try Task.checkCancellation()
                await Task.yield()
            }
            publisher.cancel()
            group.addTask {
                do {
                    try await publisher.value
                    return "published"
                } catch {
                    return "\(type(of: error))"
                }
            }
            group.addTask {
                // A bound for the old code, which waited until the connection failed.
                try await Task.sleep(for: .seconds(10))
                return "still waiting"
            }
            let first = try await group.next() ?? ""
            connection.fail(TransportError(.connectionClosed, "test over"))
            group.cancelAll()
            return first
        }
        #expect(outcome == "CancellationError")
    }

    /// A QoS 1 or 2 message's acknowledgement is queued before the message is handed over, so that a
    /// receiver that leaves as soon as it has the message queues its DISCONNECT behind it. It was queued
    /// after the hand-over, behind such a DISCONNECT, and dropped there (nothing may follow it).
    @Test(arguments: [MQTTQoS.atLeastOnce, .exactlyOnce])
    func anAcknowledgementGoesOutBeforeTheReceiverLeaves(qos: MQTTQoS) async throws {
        let stream = ScriptedStream()
        stream.openGate()
        let receiver = Mutex<MQTTConnection?>(nil)
        let connection = MQTTConnection(
            socket: stream,
            broker: MQTTBrokerAddress(host: "scripted"),
            configuration: .init(),
            onMessage: { _ in _ = receiver.withLock { $0 }?.queueDisconnect() }
        )
        receiver.withLock { $0 = connection }
        connection.acceptWithoutHandshake()
        let disconnect = try MQTTPacket.disconnect.encoded()
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await connection.runReader(decoder: MQTTPacketDecoder()) }
            group.addTask { await connection.runWriter() }
            stream.feed(try MQTTPacket.publish(.init(topic: "t", payload: [1], qos: qos, packetID: 5)).encoded())
            await stream.waitUntilWritten { $0.suffix(disconnect.count).elementsEqual(disconnect) }
            stream.close()
        }
        receiver.withLock { $0 = nil }  // the handler's reference would keep the connection alive
        var decoder = MQTTPacketDecoder()
        decoder.append(stream.written)
        var packets: [MQTTPacket] = []
        while let packet = try decoder.next() { packets.append(packet) }
        #expect(packets == [qos == .atLeastOnce ? .puback(5) : .pubrec(5), .disconnect])
    }
}
