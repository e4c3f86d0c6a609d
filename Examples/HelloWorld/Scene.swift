import CoatyCommunication
import CoatyControllers
import CoatyModel
import CoatyTransport

/// What the scene did, for the closing summary and for tests.
struct SceneSummary: Sendable {
    /// The numbers of the tasks the service reported done, as a client retrieved them.
    var finishedTasks: [Int]
    /// Events printed, by pattern.
    var counts: [String: Int]
    /// Agents the monitor saw leave, in order.
    var removedAgents: [String]
}

/// A failure of the scene itself (not of the framework's API).
struct SceneError: Error, CustomStringConvertible {
    var description: String
}

/// The whole hello-world scene: a monitor, a service and two clients, each its own agent with its own
/// transport connection, nested so that they start in that order and leave in reverse order.
enum Scene {
    static func run(
        tasks: Int,
        pacing: Duration,
        narrator: Narrator,
        makeTransport: @escaping @Sendable () -> any Transport
    ) async throws -> SceneSummary {
        @Sendable func configuration(_ name: String) -> Container.Configuration {
            Container.Configuration(
                transport: makeTransport(),
                communication: .init(identity: Identity(name: name), objectFamily: HelloWorld.family)
            )
        }
        let monitorLifecycle = ObjectLifecycleController()
        let monitor = MonitorController(narrator: narrator, lifecycle: monitorLifecycle)
        let finished = try await Container.withRunning(
            configuration: configuration("monitor"),
            controllers: [monitorLifecycle, monitor]
        ) { _ in
            let serviceLifecycle = ObjectLifecycleController()
            let service = ServiceController(narrator: narrator, lifecycle: serviceLifecycle)
            let finished = try await Container.withRunning(
                configuration: configuration("service"),
                controllers: [serviceLifecycle, service]
            ) { _ in
                let clientA = ClientController(name: "client A", narrator: narrator)
                let clientB = ClientController(name: "client B", narrator: narrator)
                let finished = try await Container.withRunning(
                    configuration: configuration("client A"),
                    controllers: [clientA]
                ) { _ in
                    try await Container.withRunning(configuration: configuration("client B"), controllers: [clientB]) {
                        _ in
                        for number in 1...max(1, tasks) {
                            try service.offer(number)
                            let done = await narrator.wait { milestone in
                                if case .taskDone(number, _) = milestone { return true }
                                return false
                            }
                            guard done else { throw SceneError(description: "task #\(number) was not done in time") }
                            if pacing > .zero { try await Task.sleep(for: pacing) }
                        }
                        return try await clientA.finishedTasks().map(\.number)
                    }
                }
                // The clients have left gracefully: the monitor sees both go.
                for client in ["client A", "client B"] {
                    _ = await narrator.wait { $0 == .agentRemoved(client) }
                }
                return finished
            }
            _ = await narrator.wait { $0 == .agentRemoved("service") }
            return finished
        }
        let removed = narrator.milestones.compactMap { milestone -> String? in
            if case .agentRemoved(let name) = milestone { return name }
            return nil
        }
        return SceneSummary(finishedTasks: finished, counts: narrator.counts, removedAgents: removed)
    }

    /// The closing summary, one line per pattern.
    static func summary(_ summary: SceneSummary, tasks: Int) -> [String] {
        var lines = [
            "",
            "Summary: \(summary.finishedTasks.count) of \(tasks) tasks done; agents left: \(summary.removedAgents.joined(separator: ", "))",
        ]
        for pattern in summary.counts.keys.sorted() {
            lines.append("  \(pattern): \(summary.counts[pattern] ?? 0)")
        }
        return lines
    }
}
