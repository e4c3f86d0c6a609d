import CoatyCore
public import CoatyModel
public import CoatyTransport
import Synchronization

/// Publishes and observes Coaty events through a `Transport`.
///
/// ## Lifecycle
///
/// Create a manager, then call ``run()`` in a task that lives as long as the agent should. `run()`
/// connects, subscribes every observation in one subscribe call, advertises the identity (the join
/// event) before any queued publication, and then sends and routes events. When the connection fails
/// or is lost the manager goes offline, waits (exponential backoff from
/// ``Configuration/initialReconnectDelay`` to ``Configuration/maximumReconnectDelay``) and does it all
/// again. It stops gracefully when ``finish()`` is called or its task is cancelled: it sends what is
/// queued, publishes the unjoin Deadvertise and closes the connection. Every stream of the manager
/// finishes when `run()` returns.
///
/// Observations (`observe…`) and requests (`discover`, `query`, `update`, `call`) may be set up
/// before or while `run()` runs; publications made while offline are queued.
///
/// ```swift
/// let manager = CommunicationManager(transport: InProcessTransport(bus: bus), configuration: .init(identity: identity))
/// try await withThrowingDiscardingTaskGroup { group in
///     group.addTask { try await manager.run() }
///     for await advertise in try await manager.observeAdvertise(objectType: "com.example.Light") { … }
/// }
/// ```
public final class CommunicationManager: Sendable {
    /// The settings of this manager.
    public let configuration: Configuration
    let transport: any Transport
    let state: Mutex<ManagerState>
    /// The tasks waiting for something the state machine decides: the send loop parked, observations
    /// waiting for their subscriptions, a connection attempt or backoff that a stop may end. The state
    /// machine holds their tokens and names those to resume in its actions.
    let waiters = WaiterRegistry()
    /// Sleeps for the reconnect backoff, on the clock given at init.
    let sleep: @Sendable (Duration) async throws -> Void

    /// The agent identity this manager advertises.
    public var identity: Identity { self.configuration.identity }

    /// The namespace events are published in.
    public var namespace: String { self.configuration.namespace }

    /// Creates a manager. It does nothing until ``run()`` is called.
    ///
    /// - Parameters:
    ///   - transport: How to reach other agents.
    ///   - configuration: Identity, namespace, object family and limits.
    public convenience init(transport: any Transport, configuration: Configuration) {
        self.init(transport: transport, configuration: configuration, clock: ContinuousClock())
    }

    /// Creates a manager whose reconnect backoff runs on `clock`, so a test can advance it.
    package init<C: Clock<Duration>>(transport: any Transport, configuration: Configuration, clock: C) {
        self.transport = transport
        self.configuration = configuration
        self.sleep = { try await clock.sleep(for: $0) }
        var state = ManagerState(configuration: configuration)
        state.machine.routing.addPermanent(
            CoatyTopic.subscriptionFilter(.discover, namespace: configuration.subscriptionNamespace)
        )
        self.state = Mutex(state)
    }

    /// The MQTT client id: `"Coaty"` and the first 18 hex digits of the identity id without dashes.
    public var clientID: String {
        "Coaty" + String(self.identity.objectID.rawValue.filter { $0 != "-" }.prefix(18))
    }

    /// The current communication state.
    public var communicationState: CommunicationState {
        self.state.withLock { $0.reportedState }
    }

    /// Why the manager is offline: the error of the last failed connection attempt or lost
    /// connection (a `TransportError` from the transport, such as `.connectionRefused` or
    /// `.connectFailed`), or `nil` while online and before the first attempt failed. Each failure is
    /// also reported by ``observeDiagnostics()`` (``CommunicationDiagnostic/Kind/connectionFailed``).
    public var connectionFailure: (any Error)? {
        self.state.withLock { $0.connectionFailure }
    }

    // MARK: State and diagnostics streams

    /// Observes the communication state: yields the current state first, then every change.
    ///
    /// Returns without suspending. The stream finishes when ``run()`` returns. Tests and agents wait
    /// for `.online` with it instead of sleeping:
    ///
    /// ```swift
    /// for await state in manager.observeCommunicationState() where state == .online { break }
    /// ```
    ///
    /// The loop compiles anywhere. `first { $0 == .online }` does too inside a nonisolated function,
    /// but not in top-level code or on the main actor, where Swift 6 refuses to send the main-actor
    /// closure to the nonisolated `first(where:)`.
    public func observeCommunicationState() -> EventStream<CommunicationState> {
        let (stream, continuation) = EventStream<CommunicationState>.makeStream(bufferingNewest: 16)
        let id = self.state.withLock { state -> ObserverID in
            let id = state.machine.routing.makeID()
            state.stateObservers[id] = continuation
            continuation.yield(state.reportedState)
            return id
        }
        continuation.onTermination { [weak self] in
            _ = self?.state.withLock { $0.stateObservers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Observes diagnostics: every inbound event dropped as invalid (an unparsable topic included),
    /// every rejected response, every publication dropped from a full offline outbox or still queued
    /// when ``run()`` ends, and every event dropped from a full observer buffer.
    ///
    /// Returns without suspending. The stream finishes when ``run()`` returns. Each diagnostic is
    /// also logged at `warning` level. The stream buffers ``Configuration/observerBufferSize``
    /// diagnostics; when its consumer falls behind, newer ones are skipped and counted, and the next
    /// one it gets says how many (``CommunicationDiagnostic/skipped``).
    public func observeDiagnostics() -> EventStream<CommunicationDiagnostic> {
        let (stream, continuation) = EventStream<CommunicationDiagnostic>.makeStream(
            bufferingNewest: self.configuration.observerBufferSize
        )
        let id = self.state.withLock { state -> ObserverID in
            let id = state.machine.routing.makeID()
            state.diagnosticObservers[id] = DiagnosticObserver(continuation)
            return id
        }
        continuation.onTermination { [weak self] in
            _ = self?.state.withLock { $0.diagnosticObservers.removeValue(forKey: id) }
        }
        return stream
    }

    package func report(_ diagnostic: CommunicationDiagnostic) {
        self.report(diagnostic, to: self.state.withLock { Array($0.diagnosticObservers.values) })
    }

    /// Logs `diagnostic` and hands it to `observers`.
    func report(
        _ diagnostic: CommunicationDiagnostic,
        to observers: [DiagnosticObserver]
    ) {
        self.configuration.logger.warning(
            "dropped: \(diagnostic.reason)",
            metadata: ["topic": diagnostic.topic, "kind": "\(diagnostic.kind)"]
        )
        for observer in observers { observer.yield(diagnostic) }
    }

    /// Reports a change of the state machine's communication state to the state observers.
    func updateCommunicationState(in state: inout ManagerState) {
        let newState = state.machine.communicationState
        guard state.reportedState != newState else { return }
        state.reportedState = newState
        for observer in state.stateObservers.values { observer.yield(newState) }
        self.configuration.logger.info("communication \(newState)", metadata: ["clientID": self.clientID])
    }

    /// Resumes the waits the state machine named.
    func resume(_ tokens: some Sequence<WaiterToken>) {
        for token in tokens { self.waiters.resume(token) }
    }

    // MARK: Stopping

    /// Requests a graceful stop of ``run()``: queued publications are sent, the unjoin Deadvertise is
    /// published, and the connection is closed gracefully (no last will). Returns without suspending.
    ///
    /// If `run()` is waiting to reconnect, or still connecting and not yet online, it returns at once
    /// (a join already sent is undone by the last will of the abandoned connection). If `run()` has not
    /// started yet, the next `run()` returns at once without connecting, so a `finish()` racing a
    /// just-spawned `run()` is never lost.
    public func finish() {
        switch self.state.withLock({ $0.machine.stopRequested() }) {
        case .none:
            break
        case .abandonAttempt(let abandon, let releasing):
            self.resume([abandon] + releasing)
        case .interruptBackoff(let interrupt):
            self.resume([interrupt])
        case .drain(let wake):
            if let wake { self.resume([wake]) }
        }
    }
}

extension CommunicationManager.Configuration {
    /// The namespace level used in subscription filters: `nil` (`+`) with cross-namespacing.
    var subscriptionNamespace: String? {
        self.isCrossNamespacingEnabled || self.namespace.isEmpty ? nil : self.namespace
    }
}
