import CoatyCommunication
import CoatyTesting
import Synchronization
import Testing

@testable import HelloWorld

/// The whole scene in-process over the in-process transport: no broker, no sockets.
@Suite(.timeLimit(.minutes(2)))
struct HelloWorldSceneTests {
    @Test func everyPatternHappensAndEveryAgentLeaves() async throws {
        let lines = Lines()
        let narrator = Narrator(colour: false) { lines.append($0) }
        let bus = InProcessBus()
        let summary = try await Scene.run(tasks: 2, pacing: .zero, narrator: narrator) { InProcessTransport(bus: bus) }

        #expect(summary.finishedTasks == [1, 2])
        for pattern in [
            "Advertise", "Discover→Resolve", "Update→Complete", "Call→Return", "Channel", "Query→Retrieve", "Log",
            "lifecycle",
        ] {
            #expect((summary.counts[pattern] ?? 0) > 0, "no \(pattern) event")
        }
        #expect(summary.counts["Discover→Resolve"] == 2)  // both clients found the service
        #expect(summary.counts["Channel"] == 2)  // one report per task
        #expect(Set(summary.removedAgents) == ["client A", "client B", "service"])

        let printed = lines.all
        #expect(printed.contains { $0.contains("monitor") && $0.contains("task #2 done") })
        #expect(printed.contains { $0.contains("[service] task #1 done: Hello, Ada!") })
        #expect(printed.contains { $0.contains("task #1 removed with its agent") })
        #expect(!printed.contains { $0.contains("\u{1B}[") }, "no colour when asked for none")
    }

    @Test(arguments: [
        ([], Options.Role.scene), (["service", "--tasks", "2", "--agents", "3"], .service),
        (["client", "--name", "x"], .client),
    ])
    func commandLines(arguments: [String], role: Options.Role) throws {
        #expect(try Options(parsing: arguments).role == role.rawValue)
    }

    @Test(arguments: [["--tasks", "0"], ["client", "--broker", "http://x"], ["bogus"], ["--name"]])
    func badCommandLinesAreUsageErrors(arguments: [String]) {
        #expect(throws: Options.UsageError.self) { try Options(parsing: arguments) }
    }
}

extension Options {
    enum Role: String, Sendable {
        case scene, service, client, monitor
    }
}

final class Lines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { self.lines.withLock { $0.append(line) } }
    var all: [String] { self.lines.withLock { $0 } }
}

/// `hello-world` takes its broker, namespace and credentials from COATY_* variables where the command
/// line does not give them.
struct HelloWorldEnvironmentTests {
    @Test func theEnvironmentSetsTheConnectionAndTheCommandLineWins() throws {
        let environment = [
            "COATY_BROKER_URL": "mqtt://broker.example:1884", "COATY_NAMESPACE": "plant",
            "COATY_USERNAME": "agent", "COATY_PASSWORD": "secret",
        ]
        let options = try Options(parsing: ["client"], environment: environment)
        #expect(options.broker == "mqtt://broker.example:1884")
        #expect(options.namespace == "plant")
        #expect(options.username == "agent")
        #expect(options.password == "secret")
        let overridden = try Options(parsing: ["client", "--namespace", "lab"], environment: environment)
        #expect(overridden.namespace == "lab")
        #expect(throws: Options.UsageError.self) {
            try Options(parsing: ["client"], environment: ["COATY_BROKER_URL": "ws://host"])
        }
    }
}
