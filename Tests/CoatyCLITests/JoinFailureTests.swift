import CoatyBroker
import CoatySockets
import Foundation
import TestSupport
import Testing

/// The `coaty` executable says at once, and in its own words, why it could not join: nothing listens,
/// the broker accepted the connection but did not answer the MQTT handshake, or it refused the
/// connection.
@Suite(.enabled(if: Mosquitto.isAvailable, "mosquitto is not installed"), .timeLimit(.minutes(1)))
struct JoinFailureTests {
    /// Nothing listens on the port: reported at once, as mosquitto_sub does (the old fixed join window
    /// said so only after 5 s).
    @Test func aRefusedConnectionIsReportedAtOnce() async throws {
        let executable = try #require(InterruptTests.executable, "coaty is not built")
        let url = "mqtt://127.0.0.1:\(try LoopbackPort.unused())"
        let started = ContinuousClock.now
        let result = try await runProcess(executable, ["discover", "--broker", url, "--timeout", "30"])
        let elapsed = ContinuousClock.now - started
        #expect(result.status == 1)
        #expect(result.errorOutput.hasPrefix("error: cannot reach the broker at \(url): "), "\(result.errorOutput)")
        #expect(result.errorOutput.contains("Connection refused"), "\(result.errorOutput)")
        #expect(elapsed < .seconds(4), "took \(elapsed)")
    }

    /// With brokers to fail over to, refused means every one refused in the round; still at once.
    @Test func everyBrokerRefusingIsReportedAtOnce() async throws {
        let executable = try #require(InterruptTests.executable, "coaty is not built")
        let urls = try (0..<2).map { _ in "mqtt://127.0.0.1:\(try LoopbackPort.unused())" }
        let started = ContinuousClock.now
        let result = try await runProcess(
            executable,
            ["call", "com.example.op", "--timeout", "30", "--broker", urls[0], "--broker", urls[1]]
        )
        let elapsed = ContinuousClock.now - started
        #expect(result.status == 1)
        #expect(
            result.errorOutput.hasPrefix("error: none of the brokers \(urls[0]), \(urls[1]) could be joined; "),
            "\(result.errorOutput)"
        )
        #expect(result.errorOutput.contains("cannot reach the broker at \(urls[1]): "), "\(result.errorOutput)")
        #expect(elapsed < .seconds(4), "took \(elapsed)")
    }

    /// A server that accepts the connection and never answers CONNECT is not "unreachable".
    @Test func aBrokerThatAcceptsButNeverAnswersIsToldApart() async throws {
        let executable = try #require(InterruptTests.executable, "coaty is not built")
        let listener = try TCPListener.bind(port: 0)
        defer { listener.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                let connection = try await listener.accept()
                defer { connection.close() }
                // Read the CONNECT and everything after, never answering, until the client gives up.
                while try await !connection.read().isEmpty {}
            }
            let result = try await runProcess(
                executable,
                ["discover", "--broker", "mqtt://127.0.0.1:\(listener.port)"]
            )
            #expect(result.status == 1)
            #expect(
                result.errorOutput
                    == "error: the broker at mqtt://127.0.0.1:\(listener.port) accepted the connection but did not "
                    + "answer the MQTT handshake within 5 s\n"
            )
            try await group.waitForAll()
        }
    }

    /// mosquitto refusing anonymous clients: its CONNACK's reason, in words.
    @Test func aRefusalSaysWhy() async throws {
        let executable = try #require(InterruptTests.executable, "coaty is not built")
        try await Mosquitto.withRunning(allowAnonymous: false) { mosquitto in
            let result = try await runProcess(executable, ["discover", "--broker", mosquitto.url])
            #expect(result.status == 1)
            #expect(
                result.errorOutput.hasPrefix(
                    "error: the broker at \(mosquitto.url) refused the connection: not authorised"
                ),
                "\(result.errorOutput)"
            )
        }
    }

    /// Every client subcommand takes its credentials from COATY_USERNAME and COATY_PASSWORD: a wrong
    /// password from the environment reaches the broker, which refuses it as a bad password (without a
    /// user name it would refuse an anonymous client: "not authorised"), and the right one joins.
    @Test(arguments: [["discover"], ["call", "com.example.op"], ["router", "Kitchen"], ["monitor"]])
    func credentialsComeFromTheEnvironment(subcommand: [String]) async throws {
        let executable = try #require(InterruptTests.executable, "coaty is not built")
        let configuration = MQTTBroker.Configuration(credentials: .init(username: "agent", password: "secret"))
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            let url = "mqtt://127.0.0.1:\(broker.port)"
            let wrong = try await runProcess(
                executable,
                subcommand + ["--broker", url],
                environment: ["COATY_USERNAME": "agent", "COATY_PASSWORD": "wrong"]
            )
            #expect(wrong.status == 1)
            #expect(
                wrong.errorOutput.hasPrefix(
                    "error: the broker at \(url) refused the connection: bad user name or password"
                ),
                "\(wrong.errorOutput)"
            )
            // The right password joins: discover finds nobody and succeeds.
            if subcommand == ["discover"] {
                let right = try await runProcess(
                    executable,
                    subcommand + ["--broker", url, "--timeout", "0.2"],
                    environment: ["COATY_USERNAME": "agent", "COATY_PASSWORD": "secret"]
                )
                #expect(right.status == 0, "\(right.errorOutput)")
            }
        }
    }
}
