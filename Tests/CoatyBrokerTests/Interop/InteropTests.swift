import CoatyBroker
import Foundation
import TestSupport
import Testing

/// The embedded broker with real third-party clients: mosquitto_pub/mosquitto_sub and paho-mqtt.
@Suite(.timeLimit(.minutes(2)))
struct InteropTests {
    static let mosquittoPub = "/usr/bin/mosquitto_pub"
    static let mosquittoSub = "/usr/bin/mosquitto_sub"

    /// Fails at once, naming the fix, when mosquitto's clients are missing (`bash Scripts/test.sh`
    /// installs them): without them a test would wait for a subscription that never comes until the
    /// suite's time limit.
    private func requireMosquittoClients() throws {
        for client in [Self.mosquittoPub, Self.mosquittoSub] {
            try #require(
                FileManager.default.isExecutableFile(atPath: client),
                "\(client) is not installed; bash Scripts/test.sh installs mosquitto-clients"
            )
        }
    }

    /// Waits until `clientID` has subscribed, using the broker's event stream.
    private func subscribed(_ clientID: String, in events: BrokerEvents) async {
        _ = await events.first {
            if case .subscribed(let id, _) = $0 { return id == clientID }
            return false
        }
    }

    @Test(arguments: [0, 1, 2])
    func mosquittoSubReceivesFromMosquittoPub(qos: Int) async throws {
        try self.requireMosquittoClients()
        try await MQTTBroker.withRunning { broker in
            let events = broker.events()
            let port = "\(broker.port)"
            let subscriberID = "interop-sub-\(qos)"
            async let subscriber = runProcess(
                Self.mosquittoSub,
                [
                    "-h", "127.0.0.1", "-p", port, "-i", subscriberID, "-t", "interop/#", "-q", "\(qos)",
                    "-C", "2", "-W", "20", "-F", "%t %q %p",
                ]
            )
            await self.subscribed(subscriberID, in: events)
            for index in 1...2 {
                let publisher = try await runProcess(
                    Self.mosquittoPub,
                    ["-h", "127.0.0.1", "-p", port, "-t", "interop/q\(qos)", "-m", "hello \(index)", "-q", "\(qos)"]
                )
                #expect(publisher.status == 0, "\(publisher.errorOutput)")
            }
            let result = try await subscriber
            #expect(result.status == 0, "\(result.errorOutput)")
            #expect(result.output == "interop/q\(qos) \(qos) hello 1\ninterop/q\(qos) \(qos) hello 2\n")
        }
    }

    @Test func mosquittoSubGetsRetainedMessage() async throws {
        try self.requireMosquittoClients()
        // Without the retained `$SYS` topics, so that the count is the test's own.
        try await MQTTBroker.withRunning(configuration: .init(systemTopicInterval: nil)) { broker in
            let port = "\(broker.port)"
            let publisher = try await runProcess(
                Self.mosquittoPub,
                ["-h", "127.0.0.1", "-p", port, "-t", "interop/retained", "-m", "kept", "-q", "1", "-r"]
            )
            #expect(publisher.status == 0)
            let subscriber = try await runProcess(
                Self.mosquittoSub,
                ["-h", "127.0.0.1", "-p", port, "-t", "interop/+", "-q", "1", "-C", "1", "-W", "10", "-F", "%r %t %p"]
            )
            #expect(subscriber.output == "1 interop/retained kept\n")
            #expect(broker.statistics.retainedMessages == 1)
            let clear = try await runProcess(
                Self.mosquittoPub,
                ["-h", "127.0.0.1", "-p", port, "-t", "interop/retained", "-n", "-r", "-q", "1"]
            )
            #expect(clear.status == 0)
            #expect(broker.statistics.retainedMessages == 0)
        }
    }

    @Test func mosquittoClientsAreRefusedWithWrongCredentials() async throws {
        try self.requireMosquittoClients()
        let configuration = MQTTBroker.Configuration(credentials: .init(username: "coaty", password: "secret"))
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            let port = "\(broker.port)"
            let refused = try await runProcess(
                Self.mosquittoPub,
                ["-h", "127.0.0.1", "-p", port, "-t", "a", "-m", "x", "-u", "coaty", "-P", "wrong"]
            )
            #expect(refused.status != 0)
            let accepted = try await runProcess(
                Self.mosquittoPub,
                ["-h", "127.0.0.1", "-p", port, "-t", "a", "-m", "x", "-u", "coaty", "-P", "secret"]
            )
            #expect(accepted.status == 0, "\(accepted.errorOutput)")
        }
    }

    @Test func pahoClientsExchangeQoSRetainedAndWill() async throws {
        try await MQTTBroker.withRunning { broker in
            let result = try await runProcess("/usr/bin/env", ["python3", "-c", Self.pahoScript, "\(broker.port)"])
            #expect(result.status == 0, "\(result.output)\(result.errorOutput)")
            #expect(result.output.contains("paho interop ok"))
        }
    }

    /// A paho-mqtt 2.x script: QoS 0/1/2 round trips, a retained message for a late subscriber, and the
    /// will of a client process that dies without DISCONNECT. Every wait has a deadline.
    static let pahoScript = #"""
        import os, subprocess, sys, threading, time
        import paho.mqtt.client as mqtt

        port = int(sys.argv[1])
        V2 = mqtt.CallbackAPIVersion.VERSION2
        received = []
        cond = threading.Condition()

        def on_message(client, userdata, message):
            with cond:
                received.append((message.topic, message.payload, message.qos, message.retain))
                cond.notify_all()

        def wait_for(predicate, what, timeout=10):
            deadline = time.time() + timeout
            with cond:
                while not predicate():
                    remaining = deadline - time.time()
                    if remaining <= 0:
                        sys.exit(f"timeout waiting for {what}; received {received}")
                    cond.wait(remaining)

        def connected_client(client_id, on_msg=None):
            ready = threading.Event()
            client = mqtt.Client(V2, client_id=client_id)
            client.on_connect = lambda c, u, f, rc, p: ready.set()
            if on_msg:
                client.on_message = on_msg
            client.connect("127.0.0.1", port, keepalive=30)
            client.loop_start()
            if not ready.wait(10):
                sys.exit(f"{client_id}: no CONNACK")
            return client

        def subscribe(client, topics):
            done = threading.Event()
            client.on_subscribe = lambda c, u, mid, codes, p: done.set()
            client.subscribe(topics)
            if not done.wait(10):
                sys.exit("no SUBACK")

        sub = connected_client("paho-sub", on_message)
        subscribe(sub, [("paho/q0", 0), ("paho/q1", 1), ("paho/q2", 2), ("paho/will", 1), ("paho/retained", 1)])
        pub = connected_client("paho-pub")
        for qos in (0, 1, 2):
            pub.publish(f"paho/q{qos}", f"qos {qos}".encode(), qos=qos).wait_for_publish(10)
        wait_for(lambda: len(received) >= 3, "three messages")
        got = sorted((t, p, q) for (t, p, q, r) in received[:3])
        expected = [("paho/q0", b"qos 0", 0), ("paho/q1", b"qos 1", 1), ("paho/q2", b"qos 2", 2)]
        if got != expected:
            sys.exit(f"unexpected messages {got}")

        pub.publish("paho/retained", b"kept", qos=1, retain=True).wait_for_publish(10)
        wait_for(lambda: any(t == "paho/retained" for (t, p, q, r) in received), "live retained message")
        live = [m for m in received if m[0] == "paho/retained"][0]
        if live[3]:
            sys.exit("live delivery must have RETAIN=0")
        late_messages = []
        def on_late(client, userdata, message):
            with cond:
                late_messages.append((message.topic, message.payload, message.retain))
                cond.notify_all()
        late = connected_client("paho-late", on_late)
        subscribe(late, [("paho/retained", 1)])
        wait_for(lambda: len(late_messages) >= 1, "retained message for a late subscriber")
        if late_messages[0] != ("paho/retained", b"kept", True):
            sys.exit(f"unexpected retained delivery {late_messages}")

        dying = (
            "import os, sys, threading, paho.mqtt.client as mqtt\n"
            "ready = threading.Event()\n"
            "c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id='paho-dying')\n"
            "c.will_set('paho/will', b'gone', qos=1)\n"
            "c.on_connect = lambda c, u, f, rc, p: ready.set()\n"
            f"c.connect('127.0.0.1', {port}, keepalive=30)\n"
            "c.loop_start()\n"
            "ready.wait(10)\n"
            "os._exit(0)\n"
        )
        subprocess.run([sys.executable, "-c", dying], timeout=20, check=True)
        wait_for(lambda: any(t == "paho/will" for (t, p, q, r) in received), "the will of a dead client")
        will = [m for m in received if m[0] == "paho/will"][0]
        if will[1] != b"gone":
            sys.exit(f"unexpected will {will}")

        pub.publish("paho/retained", b"", qos=1, retain=True).wait_for_publish(10)
        for client in (sub, pub, late):
            client.disconnect()
            client.loop_stop()
        print("paho interop ok")
        """#
}
