import CoatyCommunication
import CoatyMQTTPackets
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
            while (try? connection.publishWithoutWaiting(message)) != nil { await Task.yield() }
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
}
