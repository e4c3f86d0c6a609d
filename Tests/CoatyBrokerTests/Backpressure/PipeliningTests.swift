import CoatyBroker
import CoatyMQTTPackets
import CoatySockets
import Foundation
import TestSupport
import Testing

/// Clients that write many requests in one go and read the replies as they come: the broker answers
/// them all at the pace the client reads and never takes such a client for a slow consumer. Each case
/// runs several rounds, since the overflow it guards against depended on how reads and writes
/// interleaved (11 of 15 runs of 2,100 PUBLISHes before).
@Suite(.timeLimit(.minutes(3)))
struct PipeliningTests {
    /// Writes `packets` in one buffer while reading, and returns the packets read until `expected`
    /// replies matched `isReply`; throws if the broker closes first.
    private func pipeline(
        _ packets: [MQTTPacket],
        on client: RawMQTTClient,
        expected: Int,
        isReply: @escaping @Sendable (MQTTPacket) -> Bool
    ) async throws -> Int {
        var encoded: [UInt8] = []
        for packet in packets { try packet.encode(into: &encoded) }
        let bytes = encoded
        let connection = client.connection
        return try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                try await connection.write(bytes)
                return -1
            }
            group.addTask {
                var decoder = MQTTPacketDecoder()
                var replies = 0
                while replies < expected {
                    guard let read = try await withTimeout(.seconds(20), { try await connection.read() }) else {
                        throw RawClientError.timedOut("after \(replies) replies")
                    }
                    if read.isEmpty { throw RawClientError.closed("after \(replies) of \(expected) replies") }
                    decoder.append(read)
                    while let packet = try decoder.next() {
                        if isReply(packet) { replies += 1 }
                    }
                }
                return replies
            }
            var replies = 0
            for try await result in group where result >= 0 { replies = result }
            return replies
        }
    }

    @Test func twoThousandOneHundredQoS1PublishesInOneWriteAreAllAcknowledged() async throws {
        try await MQTTBroker.withRunning { broker in
            let events = broker.events()
            let publisher = try await RawMQTTClient.connected(port: broker.port, clientID: "pipelining-publisher")
            for round in 0..<5 {
                let packets = (1...2100).map { index in
                    MQTTPacket.publish(
                        MQTTPublishPacket(
                            topic: "pipe/\(round)",
                            payload: [1, 2, 3],
                            qos: .atLeastOnce,
                            packetID: UInt16(index)
                        )
                    )
                }
                let acknowledged = try await self.pipeline(packets, on: publisher, expected: 2100) {
                    if case .puback = $0 { return true }
                    return false
                }
                #expect(acknowledged == 2100, "round \(round)")
            }
            try await publisher.send(.disconnect)
            let disconnected = await events.first {
                if case .clientDisconnected("pipelining-publisher", _) = $0 { return true }
                return false
            }
            guard case .clientDisconnected(_, let reason) = disconnected else {
                Issue.record("no disconnect event")
                return
            }
            #expect(reason == "disconnected")
        }
    }

    @Test func tenThousandPipelinedPingsAreAllAnswered() async throws {
        try await MQTTBroker.withRunning { broker in
            let client = try await RawMQTTClient.connected(port: broker.port, clientID: "pipelining-pinger")
            for round in 0..<5 {
                let answered = try await self.pipeline(
                    Array(repeating: .pingreq, count: 10_000),
                    on: client,
                    expected: 10_000
                ) { $0 == .pingresp }
                #expect(answered == 10_000, "round \(round)")
            }
            #expect(broker.statistics.connections == 1)
        }
    }

    /// With a small message queue bound, which the count of unread replies was once tied to.
    @Test func tenThousandPipelinedSubscribesAreAllAnswered() async throws {
        try await MQTTBroker.withRunning(configuration: .init(maximumQueuedMessagesPerClient: 10)) { broker in
            let client = try await RawMQTTClient.connected(port: broker.port, clientID: "pipelining-subscriber")
            for round in 0..<3 {
                let packets = (1...10_000).map { index in
                    MQTTPacket.subscribe(
                        MQTTSubscribePacket(
                            packetID: UInt16(index),
                            subscriptions: [MQTTSubscription(filter: "\(index % 10)", qos: .atLeastOnce)]
                        )
                    )
                }
                let answered = try await self.pipeline(packets, on: client, expected: 10_000) {
                    if case .suback = $0 { return true }
                    return false
                }
                #expect(answered == 10_000, "round \(round)")
            }
            #expect(broker.statistics.subscriptions == 10)
        }
    }

    /// paho-mqtt with no in-flight limit publishes 2,100 QoS 1 messages at once, three times, while a
    /// paho subscriber receives them (its session queue holds them all, so none is dropped).
    @Test func pahoPublishesTwoThousandOneHundredQoS1MessagesAtOnce() async throws {
        try await MQTTBroker.withRunning(configuration: .init(maximumQueuedMessagesPerClient: 10_000)) { broker in
            let result = try await runProcess("/usr/bin/env", ["python3", "-c", Self.pahoScript, "\(broker.port)"])
            #expect(result.status == 0, "\(result.output)\(result.errorOutput)")
            #expect(result.output.contains("paho pipelining ok"))
        }
    }

    static let pahoScript = #"""
        import sys, threading, time
        import paho.mqtt.client as mqtt

        port = int(sys.argv[1])
        V2 = mqtt.CallbackAPIVersion.VERSION2
        lock = threading.Condition()
        state = {"received": 0, "disconnects": 0}

        def on_message(client, userdata, message):
            with lock:
                state["received"] += 1
                lock.notify_all()

        def on_disconnect(client, userdata, flags, rc, properties):
            with lock:
                state["disconnects"] += 1
                lock.notify_all()

        def connected(client_id, on_msg=None):
            ready = threading.Event()
            client = mqtt.Client(V2, client_id=client_id)
            client.max_inflight_messages_set(0)
            client.max_queued_messages_set(0)
            client.on_connect = lambda c, u, f, rc, p: ready.set()
            client.on_disconnect = on_disconnect
            if on_msg:
                client.on_message = on_msg
            client.connect("127.0.0.1", port, keepalive=30)
            client.loop_start()
            if not ready.wait(10):
                sys.exit(f"{client_id}: no CONNACK")
            return client

        sub = connected("paho-pipe-sub", on_message)
        done = threading.Event()
        sub.on_subscribe = lambda c, u, mid, codes, p: done.set()
        sub.subscribe("paho/pipe", 1)
        if not done.wait(10):
            sys.exit("no SUBACK")
        pub = connected("paho-pipe-pub")
        for round in range(3):
            infos = [pub.publish("paho/pipe", b"x" * 32, qos=1) for _ in range(2100)]
            for info in infos:
                info.wait_for_publish(30)
                if not info.is_published():
                    sys.exit(f"round {round}: a publish was not acknowledged")
            deadline = time.time() + 30
            with lock:
                while state["received"] < 2100 * (round + 1):
                    if time.time() > deadline:
                        sys.exit(f"round {round}: received {state['received']}")
                    lock.wait(1)
        if state["disconnects"]:
            sys.exit(f"{state['disconnects']} disconnects")
        print("paho pipelining ok")
        """#
}
