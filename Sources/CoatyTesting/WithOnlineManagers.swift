public import CoatyCommunication
import CoatyModel

/// Runs `count` communication managers on one in-process bus, waits until all are online, runs
/// `body`, then stops them gracefully and waits for them to finish.
///
/// Suspends until `body` returns and every manager's `run()` has returned. Managers get identities
/// named `"Agent<i>"` unless `configure` changes their configuration.
///
/// ```swift
/// try await withOnlineManagers(count: 2) { managers, bus in
///     let advertises = try await managers[1].observeAdvertise(objectType: "com.example.Light")
///     try await managers[0].publish(AdvertiseEvent(light))
///     #expect(await advertises.first { _ in true }?.object.name == "Light")
/// }
/// ```
///
/// - Parameters:
///   - count: How many managers.
///   - bus: The bus to connect to. Defaults to a fresh one.
///   - configure: Adjusts the configuration of manager `i` before it is created.
///   - body: Works with the online managers and the bus.
/// - Returns: What `body` returns.
/// - Throws: What `body` or a manager's `run()` throws.
@discardableResult
public func withOnlineManagers<Result: Sendable>(
    count: Int,
    bus: InProcessBus = InProcessBus(),
    configure: (Int, inout CommunicationManager.Configuration) -> Void = { _, _ in },
    _ body: ([CommunicationManager], InProcessBus) async throws -> Result
) async throws -> Result {
    let managers = (0..<count).map { index in
        var configuration = CommunicationManager.Configuration(
            identity: Identity(name: "Agent\(index)"),
            initialReconnectDelay: .milliseconds(10),
            maximumReconnectDelay: .milliseconds(200)
        )
        configure(index, &configuration)
        return CommunicationManager(transport: InProcessTransport(bus: bus), configuration: configuration)
    }
    return try await withOnline(managers) { try await body(managers, bus) }
}

/// Runs the given managers, whatever their transports, waits until all are online, runs `body`, then
/// stops them gracefully and waits for them to finish; ``withOnlineManagers(count:bus:configure:_:)``
/// for managers made elsewhere (for example over a wrapped or failing transport).
///
/// - Parameters:
///   - managers: The managers, started in order.
///   - body: Works with the online managers.
/// - Returns: What `body` returns.
/// - Throws: What `body` or a manager's `run()` throws.
@discardableResult
public func withOnline<Result: Sendable>(
    _ managers: [CommunicationManager],
    _ body: () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for manager in managers {
            let states = manager.observeCommunicationState()
            group.addTask { try await manager.run() }
            _ = await states.first { $0 == .online }
        }
        do {
            let result = try await body()
            for manager in managers { manager.finish() }
            try await group.waitForAll()
            return result
        } catch {
            group.cancelAll()
            throw error
        }
    }
}
