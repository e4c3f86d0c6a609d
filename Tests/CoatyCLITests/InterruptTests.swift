import CoatyBroker
import CoatyCommunication
import CoatyMQTT
import CoatyModel
import CoatySockets
import Foundation
import TestSupport
import Testing

/// The `coaty` executable interrupted while it talks to agents: it leaves and exits with status 0, as
/// Docs/CLI.md says for Ctrl-C.
@Suite(.timeLimit(.minutes(1)))
struct InterruptTests {
    /// The `coaty` executable, built next to the test bundle.
    static var executable: String? { ChildProcess.builtExecutable(named: "coaty") }

    @Test(arguments: [
        (["discover", "--timeout", "60"], SIGINT), (["discover", "--timeout", "60"], SIGTERM),
        (["call", "com.example.nobody", "--timeout", "60"], SIGINT), (["router", "Kitchen"], SIGINT),
    ])
    func anInterruptedClientExitsWithZero(subcommand: [String], signal: Int32) async throws {
        let executable = try #require(Self.executable, "coaty is not built")
        try await MQTTBroker.withRunning { broker in
            let url = "mqtt://127.0.0.1:\(broker.port)"
            let watcher = CommunicationManager(
                transport: MQTTTransport(brokerURL: url),
                configuration: .init(identity: Identity(name: "Watcher"))
            )
            let joins = await watcher.observeAdvertise(coreType: .identity)
            try await withThrowingTaskGroup(of: Void.self) { group in
                let states = watcher.observeCommunicationState()
                group.addTask { try await watcher.run() }
                _ = await states.first { $0 == .online }

                let child = try ChildProcess.spawn(
                    executable,
                    subcommand + ["--broker", url],
                    captureOutput: true
                )
                // Interrupt it once it has joined (for discover and call, well before their timeout).
                _ = await joins.first { $0.object.name.hasPrefix("coaty ") }
                child.kill(signal)
                let status = await child.waitForExit()
                #expect(status == 0, "\(child.errorOutput)")
                watcher.finish()
                try await group.waitForAll()
            }
        }
    }

    /// Interrupted while it waits for a broker that accepted the connection but does not answer (the
    /// join still under way): it exits with status 0 at once, without waiting for the connect timeout.
    @Test(arguments: [
        ["discover", "--timeout", "60"], ["call", "com.example.nobody"], ["router", "Kitchen"], ["monitor"],
    ])
    func anInterruptDuringTheJoinExitsWithZero(subcommand: [String]) async throws {
        let executable = try #require(Self.executable, "coaty is not built")
        let listener = try TCPListener.bind(port: 0)
        defer { listener.close() }
        let child = try ChildProcess.spawn(
            executable,
            subcommand + ["--broker", "mqtt://127.0.0.1:\(listener.port)"],
            captureOutput: true
        )
        defer { child.kill() }
        let connection = try await listener.accept()
        defer { connection.close() }
        _ = try await connection.read()  // the CONNECT, never answered
        child.kill(SIGINT)
        let status = await child.waitForExit()
        #expect(status == 0, "\(child.errorOutput)")
        #expect(child.errorOutput.isEmpty)
    }
}
