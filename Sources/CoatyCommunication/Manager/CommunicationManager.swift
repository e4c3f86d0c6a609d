package import CoatyCore
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
    let doorbell = Doorbell()
    let stopSignal = Mutex<OneShotSignal?>(nil)

    /// The agent identity this manager advertises.
    public var identity: Identity { self.configuration.identity }

    /// The namespace events are published in.
    public var namespace: String { self.configuration.namespace }

    /// Creates a manager. It does nothing until ``run()`` is called.
    ///
    /// - Parameters:
    ///   - transport: How to reach other agents.
    ///   - configuration: Identity, namespace, object family and limits.
    public init(transport: any Transport, configuration: Configuration) {
        self.transport = transport
        self.configuration = configuration
        var state = ManagerState(outboxCapacity: configuration.outboxCapacity)
        state.routing.addPermanent(
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
        self.state.withLock { $0.communicationState }
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
            let id = state.routing.makeID()
            state.stateObservers[id] = continuation
            continuation.yield(state.communicationState)
            return id
        }
        continuation.onTermination { [weak self] in
            _ = self?.state.withLock { $0.stateObservers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Observes diagnostics: every inbound event dropped as invalid, every rejected response, every
    /// publication dropped from a full outbox or still queued when ``run()`` ends, and every event
    /// dropped from a full observer buffer.
    ///
    /// Returns without suspending. The stream finishes when ``run()`` returns. Each diagnostic is
    /// also logged at `warning` level.
    public func observeDiagnostics() -> EventStream<CommunicationDiagnostic> {
        let (stream, continuation) = EventStream<CommunicationDiagnostic>.makeStream(
            bufferingNewest: self.configuration.observerBufferSize
        )
        let id = self.state.withLock { state -> ObserverID in
            let id = state.routing.makeID()
            state.diagnosticObservers[id] = continuation
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
        to observers: [EventStream<CommunicationDiagnostic>.Continuation]
    ) {
        self.configuration.logger.warning(
            "dropped: \(diagnostic.reason)",
            metadata: ["topic": diagnostic.topic, "kind": "\(diagnostic.kind)"]
        )
        for observer in observers { observer.yield(diagnostic) }
    }

    func setCommunicationState(_ newState: CommunicationState, in state: inout ManagerState) {
        guard state.communicationState != newState else { return }
        state.communicationState = newState
        for observer in state.stateObservers.values { observer.yield(newState) }
        self.configuration.logger.info("communication \(newState)", metadata: ["clientID": self.clientID])
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
        self.state.withLock { $0.isStopRequested = true }
        self.stopSignal.withLock { $0 }?.fire()
        self.doorbell.ring()
    }
}

extension CommunicationManager.Configuration {
    /// The namespace level used in subscription filters: `nil` (`+`) with cross-namespacing.
    var subscriptionNamespace: String? {
        self.isCrossNamespacingEnabled || self.namespace.isEmpty ? nil : self.namespace
    }
}

/// One inbound message as handed to observers.
package struct Delivery: Sendable {
    let topic: String
    /// The parsed topic of a Coaty message that is not decoded into an event (an IO value); a
    /// decoded event carries its topic's parts in its origin.
    let coatyTopic: CoatyTopic?
    let payload: [UInt8]
    let event: InboundEvent?
}

/// Which inbound events an observation or a handler receives: the topic filter to subscribe and the
/// selection of the decoded events on it.
package struct EventRoute<Event: Sendable>: Sendable {
    package let filter: TopicFilter
    package let select: @Sendable (Delivery) -> Event?
}

/// The receiver of one observation in the routing table.
struct ObserverReceiver: Sendable {
    let deliver: @Sendable (Delivery) -> Void
    let finish: @Sendable () -> Void
}

/// A control command for the connection, performed by ``CommunicationManager/run()`` in order.
enum ControlCommand: Sendable {
    case subscribe(TopicFilter, OneShotSignal?)
    case unsubscribe(TopicFilter)
}

/// The control commands waiting for the send loop, in order.
///
/// Knows whether a subscription is among them without scanning: every request asks, and up to 15
/// deferred unsubscriptions are usually waiting (see `CommunicationManager.deferredUnsubscribeBatch`).
struct ControlQueue: Sendable {
    private(set) var commands: [ControlCommand] = []
    private(set) var hasSubscribe = false

    var count: Int { self.commands.count }

    mutating func append(_ command: ControlCommand) {
        if command.isSubscribe { self.hasSubscribe = true }
        self.commands.append(command)
    }

    /// Removes and returns every command.
    mutating func takeAll() -> [ControlCommand] {
        defer { self = ControlQueue() }
        return self.commands
    }
}

/// Everything mutable of a manager, guarded by one mutex.
struct ManagerState: Sendable {
    var routing = RoutingTable<ObserverReceiver>()
    var communicationState: CommunicationState = .offline
    var isRunning = false
    var isStopRequested = false
    /// `true` while connected and past the initial subscribe: new filters are subscribed at once.
    var acceptsControl = false
    var outbox: BoundedQueue<TransportMessage>
    var control = ControlQueue()
    /// The open connection while online, so publications and subscriptions can be made from the
    /// calling task instead of handing them to ``CommunicationManager/run()`` (see ``directConnection``).
    var liveConnection: (any TransportConnection)?
    /// `true` while the send loop holds publications it took from the outbox and has not sent yet.
    var isPublishing = false
    /// The filters of the control commands the send loop took and has not finished.
    var controlInFlight: Set<TopicFilter> = []
    /// The filters whose subscription was claimed and waits for the connection's confirmation, with
    /// the signal fired when it ends (see ``claimSubscription(of:)``). The routing table counts them as
    /// subscribed, so another observation of the same filter waits for this signal instead of
    /// returning before the subscription is in place.
    var subscribing: [TopicFilter: OneShotSignal] = [:]
    /// The filters a finished request is unsubscribing from its own task, between its claim and the
    /// transport call (see ``CommunicationManager/removeObservers(_:deferringUnsubscribe:)``).
    var directReleases: Set<TopicFilter> = []
    var stateObservers: [ObserverID: EventStream<CommunicationState>.Continuation] = [:]
    var diagnosticObservers: [ObserverID: EventStream<CommunicationDiagnostic>.Continuation] = [:]

    init(outboxCapacity: Int) {
        self.outbox = BoundedQueue(capacity: outboxCapacity)
    }

    /// The connection on which the calling task may publish directly, or `nil` when the publication
    /// has to be queued for the send loop.
    ///
    /// Direct publishing is allowed only while online with no publication queued or in the send loop's
    /// hands: then nothing published earlier is still on its way, so every task's publications keep
    /// the order it made them in.
    var directPublishConnection: (any TransportConnection)? {
        guard let connection = self.liveConnection, self.outbox.isEmpty, !self.isPublishing else { return nil }
        return connection
    }

    /// The connection on which the calling task may subscribe `filter` directly, or `nil` when the
    /// subscription has to be queued for the send loop.
    ///
    /// Allowed only while online with no subscription queued (a queued one is confirmed to its waiter
    /// in order) and no command for the same filter in the send loop's hands, so the commands for one
    /// filter reach the connection in the order they were decided. Queued unsubscriptions of other
    /// filters, which every finished request leaves behind, do not hold it up.
    func directSubscribeConnection(for filter: TopicFilter) -> (any TransportConnection)? {
        guard let connection = self.liveConnection, !self.control.hasSubscribe,
            self.controlInFlight.isEmpty || !self.controlInFlight.contains(filter),
            self.directReleases.isEmpty || !self.directReleases.contains(filter)
        else { return nil }
        return connection
    }

    /// What ``claimDirectSubscription(of:)`` decided.
    enum DirectSubscription {
        /// The caller subscribes the filter on this connection from its own task, and releases the
        /// claim (`RoutingTable.releaseSubscribeClaim(_:)`) if that fails. An observation's claim
        /// comes with the signal the caller ends it with (`CommunicationManager.endSubscribing(_:_:)`).
        case claimed(any TransportConnection, OneShotSignal?)
        /// Nothing to do: the filter is subscribed, or being subscribed, already.
        case alreadyClaimed
        /// The subscription has to be queued for the send loop.
        case unavailable
    }

    /// Claims the subscription of an observed `filter` for the calling task, when the connection may
    /// take it directly (see ``directSubscribeConnection(for:)``).
    ///
    /// A request's response filter (`forResponses`) is not registered in ``subscribing``: only requests
    /// use it, and they count a subscription handed to the connection as in place.
    mutating func claimDirectSubscription(of filter: TopicFilter, forResponses: Bool = false) -> DirectSubscription {
        guard let connection = self.directSubscribeConnection(for: filter) else { return .unavailable }
        if forResponses {
            return self.routing.claimSubscribe(filter) ? .claimed(connection, nil) : .alreadyClaimed
        }
        guard let signal = self.claimSubscription(of: filter) else { return .alreadyClaimed }
        return .claimed(connection, signal)
    }

    /// Claims the subscription of `filter` (`RoutingTable.claimSubscribe(_:)`) and, when claimed,
    /// registers it in ``subscribing`` with a signal of its own, until the claimant ends it with
    /// `CommunicationManager.endSubscribing(_:_:)`.
    ///
    /// A claim on a new connection may replace the entry of one still ending on the lost connection:
    /// that one then fires only its own signal, and its waiters go on to wait for this one.
    mutating func claimSubscription(of filter: TopicFilter) -> OneShotSignal? {
        guard self.routing.claimSubscribe(filter) else { return nil }
        let signal = OneShotSignal()
        self.subscribing[filter] = signal
        return signal
    }
}

extension ControlCommand {
    var isSubscribe: Bool {
        if case .subscribe = self { return true }
        return false
    }

    var filter: TopicFilter {
        switch self {
        case .subscribe(let filter, _), .unsubscribe(let filter): filter
        }
    }
}
