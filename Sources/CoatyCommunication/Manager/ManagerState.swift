import CoatyTransport

/// Everything mutable of a ``CommunicationManager``, guarded by one mutex: the state machine, and the
/// observers of the manager's own streams.
struct ManagerState: Sendable {
    var machine: ManagerStateMachine<any TransportConnection, ObserverReceiver>
    /// The communication state last reported to ``stateObservers``.
    var reportedState: CommunicationState = .offline
    /// Why the last connection attempt failed or the connection was lost, until the next is online.
    var connectionFailure: (any Error)?
    var stateObservers: [ObserverID: EventStream<CommunicationState>.Continuation] = [:]
    var diagnosticObservers: [ObserverID: DiagnosticObserver] = [:]

    init(configuration: CommunicationManager.Configuration) {
        self.machine = ManagerStateMachine(
            outboxCapacity: configuration.outboxCapacity,
            initialReconnectDelay: configuration.initialReconnectDelay,
            maximumReconnectDelay: configuration.maximumReconnectDelay
        )
    }
}
