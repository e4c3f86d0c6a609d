import CoatyCommunication
import CoatyControllers
import CoatyCore
import CoatyModel
import CoatyTransport

/// Runs a CLI agent: joins (within 5 s, or fails saying why the broker could not be reached), runs
/// `body` while online, then leaves gracefully. `controllers` run in the agent's container.
enum AgentSession {
    static func with<Result: Sendable>(
        name: String,
        connection: ConnectionOptions,
        transport: any Transport,
        controllers: [any Controller] = [],
        _ body: @escaping @Sendable (CommunicationManager) async throws -> Result
    ) async throws -> Result {
        // Keeps the manager's last connection failures, to say why the broker could not be reached.
        let failures = InMemoryLogHandler(capacity: 4)
        let configuration = CommunicationManager.Configuration(
            identity: Identity(name: name),
            namespace: connection.namespace,
            logger: CoatyLogger(label: "coaty", level: .warning, handler: failures)
        )
        let container = Container(
            configuration: .init(transport: transport, communication: configuration),
            controllers: controllers
        )
        let manager = container.communication
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            let states = manager.observeCommunicationState()
            group.addTask {
                try await container.run()
                return nil
            }
            let online = try await Self.first(states, within: 5) { $0 == .online }
            guard online else {
                container.shutdown()
                group.cancelAll()
                let reason = failures.entries.last { $0.metadata["error"] != nil }?.metadata["error"]
                throw CLIError(Self.unreachable(connection.broker, reason: reason))
            }
            let result = try await body(manager)
            container.shutdown()
            while let _ = try await group.next() {}
            return result
        }
    }

    /// Why a CLI agent could not join. The broker's address is named once: most reasons name it
    /// already (`connect failed: cannot connect to mqtt://…: …`).
    static func unreachable(_ broker: String, reason: String?) -> String {
        guard let reason else { return "cannot reach the broker at \(broker)" }
        return reason.contains(broker)
            ? "cannot reach the broker: \(reason)" : "cannot reach the broker at \(broker): \(reason)"
    }

    /// Whether an element satisfying `predicate` arrives within `seconds`.
    static func first<Element: Sendable>(
        _ stream: EventStream<Element>,
        within seconds: Double,
        where predicate: @escaping @Sendable (Element) -> Bool
    ) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { await stream.first(where: predicate) != nil }
            group.addTask {
                try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                return false
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
    }

    /// Collects the elements of `stream` that arrive within `seconds`, handing each to `handle`.
    static func collect<Event: Sendable>(
        _ stream: EventStream<Event>,
        for seconds: Double,
        _ handle: @escaping @Sendable (Event) -> Void
    ) async throws -> Int {
        try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask {
                var count = 0
                for await event in stream {
                    handle(event)
                    count += 1
                }
                return count
            }
            group.addTask {
                try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                return nil
            }
            // Whichever ends first stops the other; the stream task reports how many arrived.
            var collected = 0
            while let value = try await group.next() {
                group.cancelAll()
                if let value {
                    collected = value
                    break
                }
            }
            return collected
        }
    }
}
