import CoatyCommunication
import CoatyControllers
import CoatyCore
import CoatyModel
import CoatyTransport

/// Runs a CLI agent: joins, or fails as soon as the transport gives up on a round of connect attempts
/// (every broker refused, timed out or did not answer), saying why; runs `body` while online, then
/// leaves gracefully. `controllers` run in the agent's container.
enum AgentSession {
    static func with<Result: Sendable>(
        name: String,
        connection: ConnectionOptions,
        transport: any Transport,
        controllers: [any Controller] = [],
        _ body: @escaping @Sendable (CommunicationManager) async throws -> Result
    ) async throws -> Result {
        let configuration = CommunicationManager.Configuration(
            identity: Identity(name: name),
            namespace: connection.namespace,
            logger: .disabled
        )
        let container = Container(
            configuration: .init(transport: transport, communication: configuration),
            controllers: controllers
        )
        let manager = container.communication
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            // Both streams exist before the manager starts, so neither outcome can be missed.
            let states = manager.observeCommunicationState()
            let diagnostics = manager.observeDiagnostics()
            group.addTask {
                try await container.run()
                return nil
            }
            let online = await Self.join(states: states, diagnostics: diagnostics)
            try Task.checkCancellation()
            guard online else {
                container.shutdown()
                // A configuration that can never work ends run() with its own error.
                while let _ = try await group.next() {}
                let failure = manager.connectionFailure ?? CLIError("the agent stopped before it joined")
                throw CLIError(JoinFailure.message(for: failure, brokers: connection.brokers))
            }
            let result = try await body(manager)
            container.shutdown()
            while let _ = try await group.next() {}
            return result
        }
    }

    /// Whether the agent gets online (true) before its first connection failure is reported or it stops
    /// (false). Both waits end before this returns, so nothing outlives the join.
    static func join(
        states: EventStream<CommunicationState>,
        diagnostics: EventStream<CommunicationDiagnostic>
    ) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await states.first { $0 == .online } != nil }
            group.addTask {
                _ = await diagnostics.first { $0.kind == .connectionFailed }
                return false
            }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
    }

    /// Collects the elements of `stream` that arrive within `seconds`, handing each to `handle`, and
    /// returns their number; returns early once `limit` elements arrived.
    static func collect<Event: Sendable>(
        _ stream: EventStream<Event>,
        for seconds: Double,
        upTo limit: Int = .max,
        _ handle: @escaping @Sendable (Event) -> Void
    ) async throws -> Int {
        try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask {
                var count = 0
                for await event in stream {
                    handle(event)
                    count += 1
                    if count >= limit { break }
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
