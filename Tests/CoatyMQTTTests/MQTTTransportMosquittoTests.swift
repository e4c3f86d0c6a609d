import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyModel
import CoatyTransport
import Foundation
import TestSupport
import Testing

@Suite(.enabled(if: Mosquitto.isAvailable, "mosquitto is not installed"), .timeLimit(.minutes(2)))
struct MQTTTransportMosquittoTests {
    private func transport(_ broker: Mosquitto) -> MQTTTransport {
        MQTTTransport(configuration: .init(brokerURL: broker.url, connectTimeout: .seconds(5)))
    }

    private func uniqueTopic(_ name: String) -> String {
        "coaty-test/\(UUID().uuidString.prefix(8))/\(name)"
    }

    @Test(arguments: [CoatyCore.QualityOfService.atMostOnce, .atLeastOnce, .exactlyOnce])
    func publishAndReceiveThroughMosquitto(qos: CoatyCore.QualityOfService) async throws {
        try await Mosquitto.withRunning { broker in
            let transport = self.transport(broker)
            let topic = self.uniqueTopic("qos\(qos.rawValue)")
            let inbox = Inbox()
            try await transport.withMQTTConnection(.init(clientID: "sub-\(qos.rawValue)"), onMessage: inbox.onMessage) {
                subscriber in
                try await subscriber.subscribe(to: [TopicFilter(topic + "/#")], qos: qos)
                try await transport.withConnection(.init(clientID: "pub-\(qos.rawValue)"), onMessage: { _ in }) {
                    publisher in
                    for index in 0..<50 {
                        let payload =
                            Array("message \(index)".utf8) + [UInt8](repeating: UInt8(index), count: index * 10)
                        try await publisher.publish(
                            TransportMessage(topic: "\(topic)/\(index)", payload: payload, qos: qos)
                        )
                    }
                }
                let received = await inbox.next(50)
                #expect(received.count == 50)
                for (index, message) in received.enumerated() {
                    #expect(message.topic == "\(topic)/\(index)")
                    #expect(message.qos == qos)
                    #expect(message.payload.count == "message \(index)".utf8.count + index * 10)
                }
            }
        }
    }

    /// Runs a caller and a callee manager through a fresh mosquitto, both online, until `body` returns.
    private func withCallerAndCallee(
        _ body: (_ caller: CommunicationManager, _ callee: CommunicationManager) async throws -> Void
    ) async throws {
        try await Mosquitto.withRunning { broker in
            try await CoatyMQTTTests.withCallerAndCallee(over: self.transport(broker), body)
        }
    }

    /// Requests and responses are published directly from the calling task (and from the handler on
    /// the reader's receive path) over MQTT too; every round trip completes, in order.
    @Test func callsAnsweredInAHandlerThroughMosquitto() async throws {
        try await self.withCallerAndCallee { caller, callee in
            let registration = try await callee.handleCalls("com.example.square") { call in
                let value = call.parameter(at: 0)?.intValue ?? 0
                try call.returnResult(.int(value * value))
            }
            defer { registration.cancel() }
            var results: [Int] = []
            for value in 0..<30 {
                let reply = try await caller.call(CallEvent(operation: "com.example.square", parameters: [.int(value)]))
                    .first(timeout: .seconds(5))
                results.append(reply.result?.intValue ?? -1)
            }
            #expect(results == (0..<30).map { $0 * $0 })
        }
    }

    /// mosquitto sends with Nagle's algorithm (its default), so it holds a response back while our
    /// side has not acknowledged its SUBACK or UNSUBACK, and delayed ACKs would then stall a round
    /// trip by about 40 ms. A round trip takes well under a millisecond on loopback; the bound only
    /// separates "no stall" from "a 40 ms stall in most round trips", with a wide margin for a loaded
    /// machine. It is checked on the lower quartile, not the median, because a machine busy with the
    /// whole suite delays some round trips without any stall. The test guards requests over
    /// mosquitto against a systematic stall; rare stalls cannot be told apart from a loaded machine's
    /// delays here.
    @Test func requestsOverMosquittoDoNotStall() async throws {
        try await self.withCallerAndCallee { caller, callee in
            let registration = try await callee.handleCalls("com.example.ping") { try $0.returnResult(nil) }
            defer { registration.cancel() }
            var durations: [Duration] = []
            for _ in 0..<41 {
                let start = ContinuousClock.now
                _ = try await caller.call(CallEvent(operation: "com.example.ping")).first(timeout: .seconds(5))
                durations.append(ContinuousClock.now - start)
            }
            let lowerQuartile = durations.sorted()[durations.count / 4]
            #expect(lowerQuartile < .milliseconds(20), "lower quartile of the round trips \(lowerQuartile)")
        }
    }

    @Test func largePayloadRoundTrip() async throws {
        try await Mosquitto.withRunning { broker in
            let transport = self.transport(broker)
            let topic = self.uniqueTopic("large")
            let payload = (0..<(3 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 / 7) }
            let inbox = Inbox()
            try await transport.withMQTTConnection(.init(clientID: "large"), onMessage: inbox.onMessage) { connection in
                try await connection.subscribe(to: [TopicFilter(topic)], qos: .atLeastOnce)
                try await connection.publish(TransportMessage(topic: topic, payload: payload, qos: .atLeastOnce))
                let received = await inbox.next(1)
                let intact = received.first?.payload == payload
                #expect(intact)
            }
        }
    }

    @Test func unsubscribeStopsDelivery() async throws {
        try await Mosquitto.withRunning { broker in
            let transport = self.transport(broker)
            let topic = self.uniqueTopic("unsub")
            let inbox = Inbox()
            try await transport.withConnection(.init(clientID: "unsub"), onMessage: inbox.onMessage) { connection in
                try await connection.subscribe(to: [TopicFilter(topic + "/a"), TopicFilter(topic + "/b")])
                try await connection.unsubscribe(from: [TopicFilter(topic + "/a")])
                // Published in order on one connection: if "a" were still subscribed it would arrive first.
                try await connection.publish(TransportMessage(topic: topic + "/a", payload: [1]))
                try await connection.publish(TransportMessage(topic: topic + "/b", payload: [2]))
                let received = await inbox.next(1)
                #expect(received.map(\.topic) == [topic + "/b"])
            }
        }
    }

    /// An unsubscription handed over without waiting reaches the broker before later publications,
    /// and its UNSUBACK is taken without a waiter; the connection goes on working.
    @Test func unsubscribeWithoutWaitingStopsDelivery() async throws {
        try await Mosquitto.withRunning { broker in
            let transport = self.transport(broker)
            let topic = self.uniqueTopic("unsub-nowait")
            let inbox = Inbox()
            try await transport.withConnection(.init(clientID: "unsub-nowait"), onMessage: inbox.onMessage) {
                connection in
                try await connection.subscribe(to: [TopicFilter(topic + "/a"), TopicFilter(topic + "/b")])
                for round in 0..<20 {
                    let filter = try TopicFilter("\(topic)/a\(round)")
                    try await connection.subscribe(to: [filter])
                    #expect(try connection.unsubscribeWithoutWaiting(from: [filter]))
                    try await connection.publish(TransportMessage(topic: filter.rawValue, payload: [1]))
                }
                try await connection.unsubscribe(from: [TopicFilter(topic + "/a")])
                #expect(try connection.unsubscribeWithoutWaiting(from: [TopicFilter(topic + "/a")]))
                try await connection.publish(TransportMessage(topic: topic + "/a", payload: [1]))
                try await connection.publish(TransportMessage(topic: topic + "/b", payload: [2]))
                let received = await inbox.next(1)
                #expect(received.map(\.topic) == [topic + "/b"])
            }
        }
    }

    @Test func lastWillIsPublishedWhenTheConnectionIsDroppedAbruptly() async throws {
        try await Mosquitto.withRunning { broker in
            let transport = self.transport(broker)
            let willTopic = self.uniqueTopic("will")
            let will = TransportMessage(topic: willTopic, payload: Array(#"{"objectIds":["x"]}"#.utf8))
            let inbox = Inbox()
            try await transport.withConnection(.init(clientID: "observer"), onMessage: inbox.onMessage) { observer in
                try await observer.subscribe(to: [TopicFilter(willTopic)])
                let (connected, signal) = AsyncStream<Void>.makeStream()
                let agent = Task {
                    try await transport.withConnection(.init(clientID: "dying", lastWill: will), onMessage: { _ in }) {
                        _ in
                        signal.yield()
                        try await Task.sleep(for: .seconds(3600))
                    }
                }
                for await _ in connected { break }
                agent.cancel()
                await #expect(throws: CancellationError.self) { try await agent.value }
                let received = await inbox.next(1)
                #expect(received.first == will)
            }
        }
    }

    @Test func gracefulCloseDiscardsTheLastWill() async throws {
        try await Mosquitto.withRunning { broker in
            let transport = self.transport(broker)
            let willTopic = self.uniqueTopic("will")
            let inbox = Inbox()
            try await transport.withConnection(.init(clientID: "observer"), onMessage: inbox.onMessage) { observer in
                try await observer.subscribe(to: [TopicFilter(willTopic)])
                let will = TransportMessage(topic: willTopic, payload: Array("will".utf8))
                try await transport.withConnection(.init(clientID: "leaving", lastWill: will), onMessage: { _ in }) {
                    _ in
                }
                // A later message from a third client on the same topic must be the first to arrive. The
                // broker handles the DISCONNECT (and would have queued the will) before it accepts the
                // next client's PUBLISH, which is sent only after the first connection is closed.
                try await transport.withConnection(.init(clientID: "marker"), onMessage: { _ in }) { marker in
                    try await marker.publish(TransportMessage(topic: willTopic, payload: Array("marker".utf8)))
                }
                let received = await inbox.next(1)
                #expect(received.first.map { String(decoding: $0.payload, as: UTF8.self) } == "marker")
            }
        }
    }

    @Test func clientIDCollisionLosesTheOlderConnection() async throws {
        try await Mosquitto.withRunning { broker in
            let transport = self.transport(broker)
            let error = await #expect(throws: TransportError.self) {
                try await transport.withMQTTConnection(.init(clientID: "same"), onMessage: { _ in }) { first in
                    try await transport.withConnection(.init(clientID: "same"), onMessage: { _ in }) { _ in
                        await first.waitUntilClosed()
                    }
                    try await first.publish(TransportMessage(topic: "x", payload: []))
                }
            }
            #expect(error?.code == .connectionLost)
        }
    }

    /// A QoS 1 or 2 publication whose PUBLISH died with the link is sent again when the persistent
    /// session resumes, and mosquitto delivers it once, in order [MQTT-4.4.0-1].
    @Test(arguments: [CoatyCore.QualityOfService.atLeastOnce, .exactlyOnce])
    func aPublicationLostWithTheLinkIsSentAgainWhenTheSessionResumes(qos: CoatyCore.QualityOfService) async throws {
        try await Mosquitto.withRunning { broker in
            try await checkPublicationLostWithTheLinkIsSentAgain(brokerPort: broker.port, qos: qos)
        }
    }

    @Test func refusedConnectionToClosedPort() async throws {
        let port = try await Mosquitto.withRunning { broker in broker.port }
        let transport = MQTTTransport(brokerURL: "mqtt://127.0.0.1:\(port)")
        let error = await #expect(throws: TransportError.self) {
            try await transport.withConnection(.init(clientID: "nobody"), onMessage: { _ in }) { _ in }
        }
        #expect(error?.code == .connectFailed)
    }

    // MARK: - Interoperability with mosquitto's C tools and paho-mqtt

    @Test func mosquittoSubReceivesOurPublication() async throws {
        try await Mosquitto.withRunning { broker in
            let transport = self.transport(broker)
            let topic = self.uniqueTopic("to-c")
            // Retained, so mosquitto_sub gets it whenever it subscribes.
            try await transport.withConnection(.init(clientID: "raw-pub"), onMessage: { _ in }) { connection in
                try await connection.publish(
                    TransportMessage(
                        topic: topic,
                        payload: Array("raw bytes \u{00e9}".utf8),
                        qos: .atLeastOnce,
                        retain: true
                    )
                )
            }
            let (status, output) = try await runTool(
                "/usr/bin/mosquitto_sub",
                ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", topic, "-C", "1", "-v", "-W", "10"]
            )
            #expect(status == 0)
            #expect(output == "\(topic) raw bytes \u{00e9}\n")
        }
    }

    @Test func weReceiveFromMosquittoPub() async throws {
        try await Mosquitto.withRunning { broker in
            let transport = self.transport(broker)
            let topic = self.uniqueTopic("from-c")
            let inbox = Inbox()
            try await transport.withMQTTConnection(.init(clientID: "raw-sub"), onMessage: inbox.onMessage) {
                connection in
                try await connection.subscribe(to: [TopicFilter(topic)], qos: .exactlyOnce)
                for qos in 0...2 {
                    let (status, _) = try await runTool(
                        "/usr/bin/mosquitto_pub",
                        ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", topic, "-q", "\(qos)", "-m", "hello \(qos)"]
                    )
                    #expect(status == 0)
                }
                let received = await inbox.next(3)
                #expect(
                    received.map { String(decoding: $0.payload, as: UTF8.self) } == ["hello 0", "hello 1", "hello 2"]
                )
                #expect(received.map(\.qos) == [.atMostOnce, .atLeastOnce, .exactlyOnce])
            }
        }
    }

    @Test func interoperatesWithPaho() async throws {
        let pahoAvailable = try await runTool("/usr/bin/env", ["python3", "-c", "import paho.mqtt.client"]).status == 0
        try #require(pahoAvailable, "paho-mqtt is not installed for python3")
        try await Mosquitto.withRunning { broker in
            let transport = self.transport(broker)
            let toPaho = self.uniqueTopic("to-paho")
            let fromPaho = self.uniqueTopic("from-paho")
            // paho subscribes to `toPaho`, then publishes to `fromPaho` (QoS 1) once subscribed, and
            // prints the message it receives.
            let script = """
                import sys, paho.mqtt.client as mqtt
                port, to_paho, from_paho = int(sys.argv[1]), sys.argv[2], sys.argv[3]
                try:
                    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="paho")
                except AttributeError:
                    c = mqtt.Client(client_id="paho")
                def on_connect(c, u, *a): c.subscribe(to_paho, qos=1)
                def on_subscribe(c, u, *a): c.publish(from_paho, b"from paho \\xff\\x00", qos=1)
                def on_message(c, u, m):
                    sys.stdout.write(m.topic + " " + m.payload.hex() + "\\n"); c.disconnect()
                c.on_connect, c.on_subscribe, c.on_message = on_connect, on_subscribe, on_message
                c.connect("127.0.0.1", port, 60)
                c.loop_forever(timeout=1.0)
                """
            let inbox = Inbox()
            try await transport.withMQTTConnection(.init(clientID: "swift"), onMessage: inbox.onMessage) { connection in
                try await connection.subscribe(to: [TopicFilter(fromPaho)], qos: .atLeastOnce)
                try await withThrowingTaskGroup { group in
                    group.addTask {
                        try await runTool(
                            "/usr/bin/env",
                            ["python3", "-c", script, "\(broker.port)", toPaho, fromPaho]
                        )
                    }
                    // paho publishes only after its subscription is in place, so our reply reaches it.
                    let received = await inbox.next(1)
                    #expect(received.first?.topic == fromPaho)
                    #expect(received.first?.payload == Array("from paho ".utf8) + [0xFF, 0x00])
                    try await connection.publish(
                        TransportMessage(topic: toPaho, payload: [0x00, 0x01, 0xFE], qos: .atLeastOnce)
                    )
                    let (status, output) = try await group.next()!
                    #expect(status == 0)
                    #expect(output == "\(toPaho) 0001fe\n")
                }
            }
        }
    }
}
