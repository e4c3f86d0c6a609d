import CoatyBroker
import CoatyMQTTPackets
import Testing

/// The write a Coaty requester makes for each request: the response subscription, the request, and
/// the release of the previous request's response subscription, in one buffer. The broker writes the
/// request to its receiver before it handles the UNSUBSCRIBE behind it, and each connection still gets
/// its packets in order.
@Suite(.timeLimit(.minutes(1)))
struct RequestWriteTests {
    @Test func aRequestsWriteIsRoutedAndAnsweredInOrder() async throws {
        try await MQTTBroker.withRunning { broker in
            var callee = try await RawMQTTClient.connected(port: broker.port, clientID: "callee")
            var caller = try await RawMQTTClient.connected(port: broker.port, clientID: "caller")
            _ = try await callee.subscribe("coaty/3/-/CLL:greet/+", qos: .atMostOnce)
            _ = try await caller.subscribe("coaty/3/-/RTN/+/first", qos: .atMostOnce)

            // The caller also subscribes the topic it calls on, so that its own delivery shows where
            // the broker put the request among its acknowledgements.
            let call = MQTTPublishPacket(topic: "coaty/3/-/CLL:greet/caller", payload: Array("{}".utf8))
            var write: [UInt8] = []
            let packets: [MQTTPacket] = [
                .subscribe(
                    MQTTSubscribePacket(
                        packetID: 2,
                        subscriptions: [
                            MQTTSubscription(filter: "coaty/3/-/RTN/+/second", qos: .atMostOnce),
                            MQTTSubscription(filter: "coaty/3/-/CLL:greet/+", qos: .atMostOnce),
                        ]
                    )
                ),
                .publish(call),
                .unsubscribe(MQTTUnsubscribePacket(packetID: 3, filters: ["coaty/3/-/RTN/+/first"])),
            ]
            for packet in packets { try packet.encode(into: &write) }
            try await caller.send(write)

            #expect(try await callee.receivePacket() == .publish(call))
            #expect(
                try await caller.receivePacket()
                    == .suback(
                        MQTTSubAckPacket(packetID: 2, returnCodes: [.granted(.atMostOnce), .granted(.atMostOnce)])
                    )
            )
            #expect(try await caller.receivePacket() == .publish(call))
            #expect(try await caller.receivePacket() == .unsuback(3))

            // The first response topic is released, the second in place.
            let first = MQTTPublishPacket(topic: "coaty/3/-/RTN/callee/first", payload: [1])
            let second = MQTTPublishPacket(topic: "coaty/3/-/RTN/callee/second", payload: [2])
            try await callee.send(.publish(first))
            try await callee.send(.publish(second))
            #expect(try await caller.receivePacket() == .publish(second))
            caller.close()
            callee.close()
        }
    }
}
