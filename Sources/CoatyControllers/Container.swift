public import CoatyCommunication
import CoatyCore
public import CoatyModel
public import CoatyTransport
import Synchronization

/// An agent: a `CommunicationManager` and the ``Controller``s that use it, with an orderly lifecycle.
///
/// Build one from a ``Configuration`` (transport, identity, namespace, object family) and the
/// controllers, then run it with ``run()`` until ``shutdown()`` or cancellation, or scoped with
/// ``withRunning(configuration:controllers:_:)``:
///
/// ```swift
/// let configuration = Container.Configuration(
///     transport: MQTTTransport(brokerURL: "mqtt://127.0.0.1:1883"),
///     communication: .init(identity: Identity(name: "Light agent"), objectFamily: [Light.self]))
/// try await Container.withRunning(configuration: configuration, controllers: [LightController()]) { agent in
///     // the agent is online and every controller's onCommunicationManagerStarting() has run
/// }
/// ```
///
/// Lifecycle: `onInit` of every controller (in order) → connect and join → once online,
/// `onCommunicationManagerStarting` of every controller (in order) → spawned work runs → on shutdown,
/// spawned work is cancelled, `onCommunicationManagerStopping` runs in reverse order while still
/// online (it runs also when the agent never came online), the manager deadvertises the identity and
/// disconnects gracefully (an agent that never came online just stops connecting), and `onDispose` runs
/// in reverse order. A container runs once.
public final class Container: Sendable {
    /// Settings of a ``Container``.
    public struct Configuration: Sendable {
        /// How the agent reaches the others.
        public var transport: any Transport
        /// The communication settings: identity, namespace, object family, buffers, reconnect delays.
        public var communication: CommunicationManager.Configuration

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - transport: The transport, for example an `MQTTTransport` or an `InProcessTransport`.
        ///   - communication: The manager's settings. Defaults to an identity named "Coaty Agent" in the
        ///     default namespace with the core object family.
        public init(transport: any Transport, communication: CommunicationManager.Configuration = .init()) {
            self.transport = transport
            self.communication = communication
        }
    }

    /// The agent's communication manager.
    public let communication: CommunicationManager
    /// The controllers, in the order given.
    public let controllers: [any Controller]

    private let items: AsyncStream<WorkSpawner.Item>
    private let spawner: WorkSpawner
    private let stopSignal = OneShotSignal()
    private let startedSignal = OneShotSignal()
    /// Whether the agent came online and every starting hook returned: set before `startedSignal` fires.
    private let isStarted = Atomic<Bool>(false)
    private let hasRun = Atomic<Bool>(false)

    /// The agent's identity.
    public var identity: Identity { self.communication.identity }

    /// Creates a container; nothing connects before ``run()``.
    public init(configuration: Configuration, controllers: [any Controller]) {
        self.communication = CommunicationManager(
            transport: configuration.transport,
            configuration: configuration.communication
        )
        self.controllers = controllers
        let (items, continuation) = AsyncStream.makeStream(of: WorkSpawner.Item.self)
        self.items = items
        self.spawner = WorkSpawner(continuation: continuation)
    }

    /// The first controller of type `type`, if any.
    public func controller<C: Controller>(ofType type: C.Type) -> C? {
        self.controllers.lazy.compactMap { $0 as? C }.first
    }

    /// Runs the agent until ``shutdown()`` is called or the task is cancelled, then shuts down in order.
    ///
    /// Suspends for the agent's whole life. Returns after the last `onDispose` hook.
    ///
    /// Cancellation reaches the manager's `run()` at the same time as the container, so the manager
    /// deadvertises the identity and disconnects while the stopping hooks run: what those hooks publish
    /// is then not sent. Call ``shutdown()`` when the stopping hooks must still talk to other agents.
    ///
    /// - Throws: `CommunicationError` with code `CommunicationError.Code.alreadyRunning` on a second
    ///   call; what an `onInit` hook throws (the agent does not connect; the controllers initialised
    ///   before it are disposed in reverse order); what an `onCommunicationManagerStarting` hook throws
    ///   (the agent then shuts down before rethrowing); what the manager's `run()` throws (for example
    ///   for an invalid namespace; the agent then shuts down, running the stopping and dispose hooks,
    ///   and rethrows).
    public func run() async throws {
        guard !self.hasRun.exchange(true, ordering: .relaxed) else {
            throw CommunicationError(.alreadyRunning, "a container runs once")
        }
        defer { self.startedSignal.fire() }
        let logger = self.communication.configuration.logger
        var initialised = 0
        do {
            for controller in self.controllers {
                try await controller.onInit(context: self.context(for: controller))
                initialised += 1
            }
        } catch {
            // Nothing connected yet: refuse spawned work and dispose what was initialised.
            self.shutdown()
            for controller in self.controllers.prefix(initialised).reversed() { await controller.onDispose() }
            throw error
        }
        var hookError: (any Error)?
        var runError: (any Error)?
        await withTaskGroup(of: (any Error)?.self) { group in
            let states = self.communication.observeCommunicationState()
            group.addTask {
                // The manager stops on its own only when it fails (an invalid namespace, say): the
                // container then stops too instead of waiting for a shutdown() that may never come.
                defer { self.shutdown() }
                do {
                    try await self.communication.run()
                    return nil
                } catch {
                    return error
                }
            }
            if await self.waitUntilOnlineOrStopped(states) {
                do {
                    for controller in self.controllers { try await controller.onCommunicationManagerStarting() }
                    self.isStarted.store(true, ordering: .releasing)
                } catch {
                    hookError = error
                    self.shutdown()
                }
            }
            self.startedSignal.fire()
            await withDiscardingTaskGroup { work in
                for await item in self.items {
                    work.addTask { await Self.perform(item, logger: logger) }
                }
                work.cancelAll()
            }
            for controller in self.controllers.reversed() { await controller.onCommunicationManagerStopping() }
            self.communication.finish()
            for await case let error? in group { runError = error }
        }
        for controller in self.controllers.reversed() { await controller.onDispose() }
        if let error = hookError ?? runError { throw error }
    }

    /// Requests an orderly shutdown of ``run()``. Returns without suspending.
    public func shutdown() {
        self.stopSignal.fire()
        self.spawner.continuation.finish()
    }

    /// Runs a container while `body` runs: `body` starts once the agent is online and every
    /// `onCommunicationManagerStarting` hook has run; when it returns or throws, the container shuts
    /// down in order and this method returns after the last `onDispose` hook. If the agent stops before
    /// that (a hook throws, the manager fails, or the task is cancelled), `body` does not run.
    ///
    /// - Returns: What `body` returns.
    /// - Throws: What `body` or ``run()`` throws; `CancellationError` if the task was cancelled before
    ///   the agent started; `CommunicationError` with code `CommunicationError.Code.notRunning` if the
    ///   agent stopped before it came online without an error (for example a controller called the
    ///   manager's `finish()`).
    public static func withRunning<Result: Sendable>(
        configuration: Configuration,
        controllers: [any Controller],
        _ body: (Container) async throws -> Result
    ) async throws -> Result {
        let container = Container(configuration: configuration, controllers: controllers)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await container.run() }
            await container.startedSignal.wait()
            guard container.isStarted.load(ordering: .acquiring) else {
                // A hook threw, the manager failed, or the task was cancelled: no body on a dead agent.
                container.shutdown()
                try await group.waitForAll()
                try Task.checkCancellation()
                throw CommunicationError(.notRunning, "the container stopped before it came online")
            }
            let result: Result
            do {
                result = try await body(container)
            } catch {
                container.shutdown()
                try? await group.waitForAll()
                throw error
            }
            container.shutdown()
            try await group.waitForAll()
            return result
        }
    }

    private func context(for controller: any Controller) -> ControllerContext {
        ControllerContext(
            communication: self.communication,
            controllerName: controller.name,
            logger: self.communication.configuration.logger,
            spawner: self.spawner
        )
    }

    /// Whether the agent came online before a stop was requested.
    private func waitUntilOnlineOrStopped(_ states: EventStream<CommunicationState>) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await states.first { $0 == .online } != nil }
            group.addTask {
                await self.stopSignal.wait()
                return false
            }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
    }

    /// Runs one spawned piece of work until it ends, its handle is cancelled, or the task is cancelled.
    private static func perform(_ item: WorkSpawner.Item, logger: CoatyLogger) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await item.work()
                } catch is CancellationError {
                } catch {
                    logger.error("spawned work failed: \(error)", metadata: ["controller": item.name])
                }
            }
            group.addTask { await item.signal.wait() }
            await group.next()
            group.cancelAll()
        }
    }
}
