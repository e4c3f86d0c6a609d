import CoatyBroker
import Foundation
import TestSupport
import Testing

/// The agents as separate `hello-world` processes, talking through a real broker: the embedded one
/// and mosquitto.
@Suite(.timeLimit(.minutes(2)))
struct HelloWorldProcessTests {
    /// The `hello-world` executable, built next to the test bundle.
    static var executable: String? { ChildProcess.builtExecutable(named: "hello-world") }

    /// Runs the service, the monitor and two clients as processes against `url` and checks their output.
    func runAgents(brokerURL url: String) async throws {
        let executable = try #require(Self.executable, "hello-world is not built")
        let common = ["--broker", url, "--namespace", "hello-\(UInt32.random(in: 0...UInt32.max))"]
        // The service waits for the other three before offering tasks; the others leave when it leaves.
        async let service = runProcess(executable, ["service", "--tasks", "2", "--agents", "3"] + common)
        async let monitor = runProcess(executable, ["monitor"] + common)
        async let clientA = runProcess(executable, ["client", "--name", "client A"] + common)
        async let clientB = runProcess(executable, ["client", "--name", "client B"] + common)
        let (s, m, a, b) = try await (service, monitor, clientA, clientB)

        for (name, result) in [("service", s), ("monitor", m), ("client A", a), ("client B", b)] {
            // Everything each agent printed, so a failure in one can be read against the others.
            let report =
                "\(name) exited with \(result.status): \(result.errorOutput)\n--- output of every agent:\n"
                + "service:\n\(s.output)\nmonitor:\n\(m.output)\nclient A:\n\(a.output)\nclient B:\n\(b.output)"
            #expect(result.status == 0, Comment(rawValue: report))
        }
        #expect(s.output.contains("all 2 tasks done"))
        #expect(s.output.contains("Update→Complete") && s.output.contains("Call→Return"))
        #expect(m.output.contains("task #2 done"))
        #expect(m.output.contains("[service] task #1 done"))
        #expect(m.output.contains("the service left"))
        let clients = a.output + b.output
        #expect(clients.contains("found \"Hello service\""))
        #expect(clients.contains("claimed task #1") && clients.contains("claimed task #2"))
    }

    @Test func agentsTalkThroughTheEmbeddedBroker() async throws {
        try await MQTTBroker.withRunning { broker in
            try await self.runAgents(brokerURL: "mqtt://127.0.0.1:\(broker.port)")
        }
    }

    @Test(.enabled(if: Mosquitto.isAvailable, "mosquitto is not installed"))
    func agentsTalkThroughMosquitto() async throws {
        try await Mosquitto.withRunning { mosquitto in
            try await self.runAgents(brokerURL: mosquitto.url)
        }
    }
}
