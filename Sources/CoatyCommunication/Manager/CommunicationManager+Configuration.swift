public import CoatyCore
public import CoatyModel

extension CommunicationManager {
    /// Settings that control a ``CommunicationManager``.
    public struct Configuration: Sendable {
        /// The agent's identity: advertised on every (re)connect, deadvertised on stop and by the last will.
        public var identity: Identity
        /// The IO nodes of this agent: advertised after the identity on every (re)connect
        /// (`ADV:IoNode`), deadvertised with it, and resolved for Discovers of the `IoNode` core type.
        public var ioNodes: [IONode]
        /// The namespace that isolates this agent's events from other Coaty applications. Default `"-"`.
        public var namespace: String
        /// Whether observations receive events of every namespace (subscriptions use `+`).
        /// Publications always use ``namespace``. Default `false`.
        public var isCrossNamespacingEnabled: Bool
        /// The object classes inbound objects are decoded into.
        public var objectFamily: ObjectFamily
        /// How many undelivered events each observation buffers before dropping the oldest. Default 256.
        public var observerBufferSize: Int
        /// How many publications are queued while offline (or not yet sent) before the oldest is
        /// dropped and reported. Default 1,000.
        public var outboxCapacity: Int
        /// The first delay before reconnecting after the connection failed or was lost. Default 1 s.
        public var initialReconnectDelay: Duration
        /// The longest delay between reconnection attempts; delays double up to it. Default 30 s.
        public var maximumReconnectDelay: Duration
        /// Where the manager logs drops, connection changes and errors (and where its transport logs,
        /// unless it has a logger of its own). Defaults to warnings and errors on standard error
        /// (`CoatyLogger.warningsToStandardError`); `.disabled` silences it.
        public var logger: CoatyLogger
        /// How long a finished request's response subscription may wait for the next request's write
        /// before it is released on its own (see `ManagerStateMachine.removeObservers`). 20 ms; tests
        /// change it.
        package var releaseHoldTime: Duration = .milliseconds(20)

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - identity: The agent's identity object. Defaults to a new identity named `"Coaty Agent"`.
        ///   - ioNodes: The agent's IO nodes. Defaults to none.
        ///   - namespace: The communication namespace. Defaults to `"-"`, Coaty's default namespace.
        ///   - isCrossNamespacingEnabled: Whether to observe events of all namespaces. Defaults to `false`.
        ///   - objectFamily: The decodable object classes. Defaults to the core types only.
        ///   - observerBufferSize: Per-observation buffer size. Defaults to 256.
        ///   - outboxCapacity: Capacity of the publication queue. Defaults to 1,000.
        ///   - initialReconnectDelay: First reconnect delay. Defaults to 1 second.
        ///   - maximumReconnectDelay: Longest reconnect delay. Defaults to 30 seconds.
        ///   - logger: The logger. Defaults to warnings and errors on standard error.
        public init(
            identity: Identity = Identity(name: "Coaty Agent"),
            ioNodes: [IONode] = [],
            namespace: String = CoatyTopic.defaultNamespace,
            isCrossNamespacingEnabled: Bool = false,
            objectFamily: ObjectFamily = ObjectFamily(),
            observerBufferSize: Int = 256,
            outboxCapacity: Int = 1_000,
            initialReconnectDelay: Duration = .seconds(1),
            maximumReconnectDelay: Duration = .seconds(30),
            logger: CoatyLogger = .warningsToStandardError
        ) {
            self.identity = identity
            self.ioNodes = ioNodes
            self.namespace = namespace
            self.isCrossNamespacingEnabled = isCrossNamespacingEnabled
            self.objectFamily = objectFamily
            self.observerBufferSize = observerBufferSize
            self.outboxCapacity = outboxCapacity
            self.initialReconnectDelay = initialReconnectDelay
            self.maximumReconnectDelay = maximumReconnectDelay
            self.logger = logger
        }
    }
}
