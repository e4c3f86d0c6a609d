import CoatyBroker
import CoatyMQTTPackets
import Testing

/// The write a Coaty requester makes for each request: the response subscription, the request, and
/// the release of the previous request's response subscription, in one buffer. When no filter of the
/// SUBSCRIBE matches a QoS 0 request's topic, the broker writes the request before it does the
/// subscription's work, yet an answer always finds the subscription, and everything else a client can
/// see happens as if the packets had been handled in order. The broker also writes the request to its
/// receiver before it handles the UNSUBSCRIBE behind it.
@Suite(.timeLimit(.minutes(1)))
struct SubscribeThenPublishTests {
    private func write(_ packets: [MQTTPacket], to client: RawMQTTClient) async throws {
        var bytes: [UInt8] = []
        for packet in packets { try packet.encode(into: &bytes) }
        try await client.send(bytes)
    }

    /// A SUBSCRIBE of one filter at QoS 0, packet id 2.
    private func subscribe(_ filter: String) -> MQTTPacket {
        .subscribe(
            MQTTSubscribePacket(packetID: 2, subscriptions: [MQTTSubscription(filter: filter, qos: .atMostOnce)])
        )
    }

    /// A callee subscribed to the requests' topics and a caller subscribed to `callerFilter`.
    private func callerAndCallee(
        _ broker: MQTTBroker,
        callerFilter: String
    ) async throws -> (caller: RawMQTTClient, callee: RawMQTTClient) {
        var callee = try await RawMQTTClient.connected(port: broker.port, clientID: "callee")
        var caller = try await RawMQTTClient.connected(port: broker.port, clientID: "caller")
        _ = try await callee.subscribe("coaty/3/-/CLL:greet/+", qos: .atMostOnce)
        _ = try await caller.subscribe(callerFilter, qos: .atMostOnce)
        return (caller, callee)
    }

    @Test func aRequestsWriteIsRoutedAndAnsweredInOrder() async throws {
        try await MQTTBroker.withRunning { broker in
            var (caller, callee) = try await self.callerAndCallee(broker, callerFilter: "coaty/3/-/RTN/+/first")
            // The caller also subscribes the topic it calls on: the subscription must then come first,
            // and its own delivery shows where the broker put the request among its acknowledgements.
            let call = MQTTPublishPacket(topic: "coaty/3/-/CLL:greet/caller", payload: Array("{}".utf8))
            try await self.write(
                [
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
                ],
                to: caller
            )
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

    /// The SUBSCRIBE's work takes long here (thousands of filters, the answer's last), and the callee
    /// answers the moment the request reaches it: the answer must still be routed to the new
    /// subscription, so the broker may not route anything else while the subscription is incomplete.
    @Test func anAnswerSentAtOnceReachesTheNewSubscription() async throws {
        try await MQTTBroker.withRunning { broker in
            var (caller, callee) = try await self.callerAndCallee(broker, callerFilter: "marker")

            let filters =
                (0..<4_000).map { MQTTSubscription(filter: "other/\($0)/+", qos: .atMostOnce) }
                + [MQTTSubscription(filter: "answer/+", qos: .atMostOnce)]
            let request = MQTTPublishPacket(topic: "coaty/3/-/CLL:greet/caller", payload: Array("call".utf8))
            try await self.write(
                [.subscribe(MQTTSubscribePacket(packetID: 2, subscriptions: filters)), .publish(request)],
                to: caller
            )
            #expect(try await callee.receivePacket() == .publish(request))
            let answer = MQTTPublishPacket(topic: "answer/1", payload: Array("return".utf8))
            let marker = MQTTPublishPacket(topic: "marker", payload: [1])
            try await callee.send(.publish(answer))
            try await callee.send(.publish(marker))

            guard case .suback(let suback) = try await caller.receivePacket() else {
                Issue.record("the SUBACK comes first")
                return
            }
            #expect(suback.returnCodes.count == filters.count)
            #expect(suback.returnCodes.allSatisfy { $0 == .granted(.atMostOnce) })
            #expect(try await caller.receivePacket() == .publish(answer), "the answer came before the marker")
            #expect(try await caller.receivePacket() == .publish(marker))
            caller.close()
            callee.close()
        }
    }

    /// A publisher subscribed to its request's topic from before gets its copy after the SUBACK.
    @Test func thePublishersOwnCopyComesAfterTheSubscriptionsAcknowledgement() async throws {
        try await MQTTBroker.withRunning { broker in
            var (caller, callee) = try await self.callerAndCallee(broker, callerFilter: "coaty/3/-/CLL:greet/+")
            let call = MQTTPublishPacket(topic: "coaty/3/-/CLL:greet/caller", payload: [1])
            try await self.write(
                [
                    self.subscribe("coaty/3/-/RTN/+/first"),
                    .publish(call),
                ],
                to: caller
            )
            #expect(try await callee.receivePacket() == .publish(call))
            #expect(
                try await caller.receivePacket()
                    == .suback(MQTTSubAckPacket(packetID: 2, returnCodes: [.granted(.atMostOnce)]))
            )
            #expect(try await caller.receivePacket() == .publish(call))
            caller.close()
            callee.close()
        }
    }

    /// A QoS 1 PUBLISH has an acknowledgement, which must not overtake the SUBACK.
    @Test func aQoS1PublishIsAcknowledgedAfterTheSubscription() async throws {
        try await MQTTBroker.withRunning { broker in
            var caller = try await RawMQTTClient.connected(port: broker.port, clientID: "caller")
            try await self.write(
                [
                    self.subscribe("answer/+"),
                    .publish(MQTTPublishPacket(topic: "request/1", payload: [1], qos: .atLeastOnce, packetID: 7)),
                ],
                to: caller
            )
            #expect(
                try await caller.receivePacket()
                    == .suback(MQTTSubAckPacket(packetID: 2, returnCodes: [.granted(.atMostOnce)]))
            )
            #expect(try await caller.receivePacket() == .puback(7))
            caller.close()
        }
    }

    /// A SUBSCRIBE the broker refuses to handle (a filter deeper than it admits) closes the connection:
    /// the PUBLISH behind it is never routed.
    @Test func anInvalidSubscriptionClosesBeforeThePublishIsRouted() async throws {
        try await MQTTBroker.withRunning { broker in
            var (caller, callee) = try await self.callerAndCallee(broker, callerFilter: "marker")
            let other = try await RawMQTTClient.connected(port: broker.port, clientID: "other")
            try await self.write(
                [
                    self.subscribe(String(repeating: "a/", count: 300) + "+"),
                    .publish(MQTTPublishPacket(topic: "coaty/3/-/CLL:greet/caller", payload: [1])),
                ],
                to: caller
            )
            #expect(await caller.isClosedByPeer())
            let marker = MQTTPublishPacket(topic: "coaty/3/-/CLL:greet/other", payload: [2])
            try await other.send(.publish(marker))
            #expect(try await callee.receivePacket() == .publish(marker))
            other.close()
            callee.close()
        }
    }

    /// A PUBLISH that closes the connection still comes after the SUBSCRIBE: a persistent session
    /// keeps the subscription. One the broker refuses (a topic deeper than it admits), and one the
    /// decoder does (QoS 0 with DUP set).
    @Test(arguments: [false, true])
    func aPublishThatClosesTheConnectionLeavesTheSubscriptionMade(undecodable: Bool) async throws {
        try await MQTTBroker.withRunning { broker in
            var caller = try await RawMQTTClient.connected(port: broker.port, clientID: "caller", cleanSession: false)
            var bytes: [UInt8] = []
            try self.subscribe("kept/+").encode(into: &bytes)
            let publishStart = bytes.count
            let topic = undecodable ? "request/1" : String(repeating: "a/", count: 300) + "b"
            try MQTTPacket.publish(MQTTPublishPacket(topic: topic, payload: [1])).encode(into: &bytes)
            if undecodable { bytes[publishStart] |= 0x08 }
            try await caller.send(bytes)
            #expect(
                try await caller.receivePacket()
                    == .suback(MQTTSubAckPacket(packetID: 2, returnCodes: [.granted(.atMostOnce)]))
            )
            #expect(await caller.isClosedByPeer())

            var again = try await RawMQTTClient.connected(
                port: broker.port,
                clientID: "caller",
                cleanSession: false,
                sessionPresent: true
            )
            let other = try await RawMQTTClient.connected(port: broker.port, clientID: "other")
            let message = MQTTPublishPacket(topic: "kept/1", payload: [3])
            try await other.send(.publish(message))
            #expect(try await again.receivePacket() == .publish(message))
            other.close()
            again.close()
        }
    }
}
