import CoatyCore
import CoatyMQTT
import CoatyMQTTPackets
import CoatyTransport
import Synchronization
import Testing

/// Packets queued while the writer waits are sent by the queueing task itself (`MQTTConnection.wake`);
/// what the socket does not take at once goes to the writer, ahead of everything queued later.
extension MQTTConnectionFakeBrokerTests {
    @Test func aMessageTheSocketCannotTakeAtOnceIsFinishedByTheWriterFirst() async throws {
        // Far more than a loopback socket takes while its peer does not read (about 4 MiB here):
        // 8 MiB, numbered word by word, so a piece lost, repeated or reordered changes the digest.
        var large = [UInt8](repeating: 0, count: 8 << 20)
        large.withUnsafeMutableBytes { bytes in
            for index in 0..<(bytes.count / 4) {
                bytes.storeBytes(of: UInt32(index), toByteOffset: index * 4, as: UInt32.self)
            }
        }
        let (queued, bothQueued) = AsyncStream<Void>.makeStream()
        let (arrived, arrival) = AsyncStream<MQTTPublishPacket>.makeStream()
        try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                guard case .subscribe(let subscribe) = try await session.read() else { return }
                try await session.send(
                    .suback(.init(packetID: subscribe.packetID, returnCodes: [.granted(.atMostOnce)]))
                )
                // Reads nothing more until the client has queued both messages.
                for await _ in queued {}
                var count = 0
                while count < 2, let packet = try await session.read() {
                    guard case .publish(let publish) = packet else { continue }
                    arrival.yield(publish)
                    count += 1
                }
                arrival.finish()
                while let packet = try await session.read(), packet != .disconnect {}
            },
            client: { transport in
                try await transport.withConnection(.init(clientID: "direct"), onMessage: { _ in }) {
                    connection throws in
                    // After a confirmed exchange the writer waits, so the next message is sent directly.
                    try await connection.subscribe(to: [TopicFilter("any")])
                    #expect(try connection.publishWithoutWaiting(TransportMessage(topic: "large", payload: large)))
                    // Queued behind the leftover of the large one (or, if the socket took it all, sent).
                    try await connection.publish(TransportMessage(topic: "small", payload: [1, 2, 3]))
                    bothQueued.finish()
                    var received: [MQTTPublishPacket] = []
                    for await publish in arrived { received.append(publish) }
                    #expect(received.map(\.topic) == ["large", "small"])
                    let intact =
                        received.first.map { Self.digest($0.payload) } == Self.digest(large)
                        && received.last?.payload == [1, 2, 3]
                    #expect(intact, "the payloads arrived as sent")
                }
            }
        )
    }

    /// Requests and responses sent directly still go out in order with the acknowledgements the reader
    /// queues: a QoS 1 message received is acknowledged, and a message published from the handler
    /// follows the PUBACK.
    @Test func aResponseFromTheMessageHandlerFollowsTheAcknowledgement() async throws {
        let (packets, packet) = AsyncStream<MQTTPacket>.makeStream()
        let answering = Mutex<(any TransportConnection)?>(nil)
        let (ready, isReady) = AsyncStream<Void>.makeStream()
        try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                for await _ in ready {}
                let request = MQTTPublishPacket(topic: "request", payload: [9], qos: .atLeastOnce, packetID: 5)
                try await session.send(.publish(request))
                while let received = try await session.read() {
                    packet.yield(received)
                    if received == .disconnect { break }
                }
                packet.finish()
            },
            client: { transport in
                let (answered, answer) = AsyncStream<Void>.makeStream()
                try await transport.withConnection(
                    .init(clientID: "responder"),
                    onMessage: { message in
                        let response = TransportMessage(topic: "response", payload: message.payload)
                        _ = try? answering.withLock { $0 }?.publishWithoutWaiting(response)
                        answer.yield()
                    }
                ) { connection in
                    answering.withLock { $0 = connection }
                    isReady.finish()
                    var iterator = answered.makeAsyncIterator()
                    await iterator.next()
                }
            }
        )
        var received: [MQTTPacket] = []
        for await item in packets { received.append(item) }
        let response = MQTTPacket.publish(MQTTPublishPacket(topic: "response", payload: [9]))
        #expect(Array(received.prefix(2)) == [.puback(5), response])
    }

    /// A digest of many bytes, hashed by the standard library's optimised code even in a debug build.
    static func digest(_ bytes: [UInt8]) -> Int {
        var hasher = Hasher()
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }
}

/// Small reads are handled on the reactor's thread while the reader's task waits (`runReader`).
extension MQTTConnectionFakeBrokerTests {
    /// A message delivered there runs outside any task. The reactor hands a read to the task when
    /// it is busy with other sockets (the suite runs in parallel), so of 20 messages sent one at a
    /// time at least one must arrive that way, and all must arrive, in order.
    @Test func smallMessagesAreDeliveredOnTheReactorsThread() async throws {
        let (delivered, delivery) = AsyncStream<(payload: [UInt8], outsideTask: Bool)>.makeStream()
        try await self.withFakeBroker(
            broker: { session in
                try await session.acceptConnect()
                var acknowledged = 0
                while acknowledged < 20 {
                    let publish = MQTTPublishPacket(
                        topic: "small",
                        payload: [UInt8(acknowledged)],
                        qos: .atLeastOnce,
                        packetID: UInt16(acknowledged + 1)
                    )
                    try await session.send(.publish(publish))
                    guard try await session.read() == .puback(UInt16(acknowledged + 1)) else { return }
                    acknowledged += 1
                }
                while let packet = try await session.read(), packet != .disconnect {}
            },
            client: { transport in
                try await transport.withConnection(
                    .init(clientID: "inline"),
                    onMessage: { message in
                        delivery.yield((message.payload, withUnsafeCurrentTask { $0 == nil }))
                    }
                ) { _ in
                    var received: [(payload: [UInt8], outsideTask: Bool)] = []
                    for await item in delivered {
                        received.append(item)
                        if received.count == 20 { break }
                    }
                    #expect(received.map(\.payload) == (0..<20).map { [UInt8($0)] })
                    #expect(received.contains { $0.outsideTask })
                }
            }
        )
    }
}
