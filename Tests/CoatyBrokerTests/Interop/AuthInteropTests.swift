import CoatyBroker
import Foundation
import TestSupport
import Testing

/// Password files made by `mosquitto_passwd` and ACL refusals seen by mosquitto's clients and paho-mqtt.
@Suite(.timeLimit(.minutes(2)))
struct AuthInteropTests {
    static let mosquittoPasswd = "/usr/bin/mosquitto_passwd"

    /// Runs `body` with a fresh temporary directory, removed afterwards.
    private func withTemporaryDirectory<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coaty-auth-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    @Test func aPasswordFileFromMosquittoPasswdIsAccepted() async throws {
        for tool in [Self.mosquittoPasswd, InteropTests.mosquittoPub] {
            try #require(FileManager.default.isExecutableFile(atPath: tool), "\(tool) is not installed")
        }
        try await self.withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("passwords").path
            let made = try await runProcess(Self.mosquittoPasswd, ["-c", "-b", path, "alice", "s3cret pass"])
            #expect(made.status == 0, "\(made.errorOutput)")
            let added = try await runProcess(Self.mosquittoPasswd, ["-b", path, "bob", "other"])
            #expect(added.status == 0, "\(added.errorOutput)")
            let passwordFile = try PasswordFile(contentsOfFile: path)
            #expect(passwordFile.usernames == ["alice", "bob"])
            #expect(passwordFile.skippedLines.isEmpty)
            try await MQTTBroker.withRunning(configuration: .init(passwordFile: passwordFile)) { broker in
                func publish(_ credentials: [String]) async throws -> ProcessResult {
                    try await runProcess(
                        InteropTests.mosquittoPub,
                        ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "a", "-m", "x", "-q", "1"] + credentials
                    )
                }
                let accepted = try await publish(["-u", "alice", "-P", "s3cret pass"])
                #expect(accepted.status == 0, "\(accepted.errorOutput)")
                let wrong = try await publish(["-u", "alice", "-P", "other"])
                #expect(wrong.status != 0)
                #expect(wrong.errorOutput.lowercased().contains("bad user name or password"), "\(wrong.errorOutput)")
                let anonymous = try await publish([])
                #expect(anonymous.status != 0)
                #expect(anonymous.errorOutput.lowercased().contains("not authori"), "\(anonymous.errorOutput)")
            }
        }
    }

    @Test func pahoSeesRefusedSubscriptionsAndNoDeniedMessages() async throws {
        let acl = """
            user reader
            topic read #
            topic deny private/#

            user writer
            topic write public/#
            topic read forbidden/#
            """
        let configuration = MQTTBroker.Configuration(accessControlList: try AccessControlList(parsing: acl))
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            let result = try await runProcess("/usr/bin/env", ["python3", "-c", Self.pahoScript, "\(broker.port)"])
            #expect(result.status == 0, "\(result.output)\(result.errorOutput)")
            #expect(result.output.contains("paho acl ok"))
        }
    }

    /// paho-mqtt 2.x: the reader's SUBSCRIBE of a denied filter gets 0x80 beside a granted one; a
    /// QoS 1 publication the writer may not make is acknowledged but never delivered, so the reader's
    /// first message is the allowed one published after it. Every wait has a deadline.
    static let pahoScript = #"""
        import sys, threading
        import paho.mqtt.client as mqtt

        port = int(sys.argv[1])
        V2 = mqtt.CallbackAPIVersion.VERSION2
        received = []
        got = threading.Event()

        def connected_client(client_id, username):
            ready = threading.Event()
            client = mqtt.Client(V2, client_id=client_id)
            client.username_pw_set(username)
            client.on_connect = lambda c, u, f, rc, p: ready.set()
            client.connect("127.0.0.1", port, keepalive=30)
            client.loop_start()
            if not ready.wait(10):
                sys.exit(f"{client_id}: no CONNACK")
            return client

        def on_message(client, userdata, message):
            received.append(message.topic)
            got.set()

        reader = connected_client("paho-reader", "reader")
        reader.on_message = on_message
        codes = []
        subscribed = threading.Event()
        def on_subscribe(c, u, mid, reason_codes, p):
            codes.extend(rc.value for rc in reason_codes)
            subscribed.set()
        reader.on_subscribe = on_subscribe
        reader.subscribe([("private/#", 1), ("#", 1)])
        if not subscribed.wait(10):
            sys.exit("no SUBACK")
        if codes != [0x80, 1]:
            sys.exit(f"unexpected SUBACK return codes {codes}")

        writer = connected_client("paho-writer", "writer")
        writer.publish("forbidden/x", b"no", qos=1).wait_for_publish(10)
        writer.publish("public/x", b"yes", qos=1).wait_for_publish(10)
        if not got.wait(10):
            sys.exit("no message delivered")
        if received[0] != "public/x":
            sys.exit(f"a denied publication was delivered: {received}")
        for client in (reader, writer):
            client.disconnect()
            client.loop_stop()
        print("paho acl ok")
        """#
}
