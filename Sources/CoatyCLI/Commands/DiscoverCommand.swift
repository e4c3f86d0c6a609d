import CoatyCommunication
import CoatyModel
import CoatyTransport

/// `coaty discover`: lists the agents present by discovering their identities.
enum DiscoverCommand {
    static func run(
        _ options: DiscoverOptions,
        transport: any Transport,
        output: @escaping @Sendable (String) -> Void
    ) async throws -> Int {
        try await AgentSession.with(name: "coaty discover", connection: options.connection, transport: transport) {
            manager in
            let me = manager.identity.objectID
            let resolves = try await manager.discover(try DiscoverEvent.byCoreTypes([.identity]))
            let count = try await AgentSession.collect(resolves, for: options.timeoutSeconds) { resolve in
                guard let identity = resolve.object, identity.objectID != me else { return }
                output("\(identity.name)  \(identity.objectID)  (\(identity.objectType))")
            }
            // Our own identity answers too (coaty-js does the same); do not count it.
            output("\(max(0, count - 1)) agent(s) found in namespace '\(options.connection.namespace)'")
            return max(0, count - 1)
        }
    }
}
