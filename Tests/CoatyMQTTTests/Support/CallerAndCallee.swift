import CoatyCommunication
import CoatyMQTT
import CoatyModel

/// Runs a caller and a callee manager over `transport`, both online, until `body` returns, then
/// finishes them.
func withCallerAndCallee(
    over transport: MQTTTransport,
    _ body: (_ caller: CommunicationManager, _ callee: CommunicationManager) async throws -> Void
) async throws {
    let managers = ["caller", "callee"].map { name in
        CommunicationManager(transport: transport, configuration: .init(identity: Identity(name: name)))
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
        for manager in managers {
            let states = manager.observeCommunicationState()
            group.addTask { try await manager.run() }
            _ = await states.first { $0 == .online }
        }
        try await body(managers[0], managers[1])
        for manager in managers { manager.finish() }
        try await group.waitForAll()
    }
}
