import CoatyCore
import CoatyMQTTPackets
import CoatySockets
import CoatyTLS
import CoatyWebSocket
import Synchronization

/// An embedded MQTT 3.1.1 broker for development, tests and small deployments.
///
/// It supports QoS 0, 1 and 2, retained messages, last wills (also on keep-alive expiry), clean and
/// persistent sessions with queued messages for offline clients (in memory, or kept across restarts
/// with ``Configuration/persistence``), wildcards and `$` topics as the standard defines them, session
/// takeover and optional username/password authentication. Every
/// buffer is bounded (see ``Configuration``); a malformed or hostile client is disconnected without
/// affecting the others. For production, point agents at mosquitto, EMQX or HiveMQ.
///
/// Binding and serving are separate steps, so the port is known before serving:
///
/// ```swift
/// let broker = try MQTTBroker.bind(host: "127.0.0.1", port: 0)
/// print("listening on", broker.port)
/// try await broker.run()      // serves until the task is cancelled
/// ```
///
/// In tests, ``withRunning(host:port:configuration:_:)`` scopes a broker to a closure.
public final class MQTTBroker: Sendable {
    /// The broker's settings.
    public let configuration: Configuration
    /// The TCP port the broker listens on (the one the OS chose when bound with port 0).
    public let port: Int
    /// The port of the WebSocket listener (MQTT over `ws://`), or `nil` when
    /// ``Configuration/webSocketPort`` is `nil`; the one the OS chose when configured with 0.
    public let webSocketPort: Int?
    /// The port of the TLS listener (MQTT over `mqtts://`), or `nil` when ``Configuration/tls`` is
    /// `nil`; the one the OS chose when configured with 0.
    public let tlsPort: Int?
    /// The port of the WebSocket-over-TLS listener (MQTT over `wss://`), or `nil` when
    /// ``TLSListener/webSocketPort`` is `nil`; the one the OS chose when configured with 0.
    public let secureWebSocketPort: Int?

    let listener: TCPListener
    let webSocketListener: TCPListener?
    /// The TLS listeners and the certificates they present.
    let tlsListeners: TLSListeners?
    let core: Mutex<Core>
    /// The persistence log, when ``Configuration/persistence`` is set.
    let persistence: BrokerPersistence?
    /// The deadline of every open connection, checked by the sweeper in ``run()``.
    let watches = Mutex<[ConnectionID: ActivityWatch]>([:])
    /// ``Configuration/clock``, read as the time since the broker was made.
    let clock: ElapsedClock
    /// The connections waiting with no task of their own.
    let parked = ParkedConnections()
    let logger: CoatyLogger
    /// The traffic counters of the `$SYS` topics.
    let traffic = BrokerTraffic()
    /// The bounds of every connection's outbox, from the configuration.
    let outboxLimits: OutboxState.Limits
    private let nextConnectionID = Atomic<UInt64>(1)
    /// Open connections, counted from the accept until closed (see ``Configuration/maximumConnections``).
    let openConnections = Atomic<Int>(0)
    /// The bytes all readers hold of unfinished packets (see
    /// ``Configuration/maximumUnfinishedPacketBytes``).
    let unfinishedPacketBytes = Atomic<Int>(0)
    private let nextAssignedClientID = Atomic<UInt64>(1)
    private let observers = Mutex(EventObservers())

    private struct EventObservers: Sendable {
        var isStopped = false
        var nextID = 0
        var continuations: [Int: AsyncStream<BrokerEvent>.Continuation] = [:]
    }

    /// The shared state: sessions plus the write queue of every attached connection.
    struct Core: ~Copyable {
        var sessions: BrokerSessions
        /// Woken when the journal of `sessions` grows large (see ``BrokerPersistence``).
        let persistence: BrokerPersistence?
        var outboxes: [ConnectionID: Outbox] = [:]
        var droppedQoS0 = 0
        /// Connections whose socket queue was at least half full when a publish was queued, since the
        /// publishing reader last looked (see ``ClientConnection``'s flow control).
        var congestedConnections: Set<ConnectionID> = []
        /// The outputs array a publish or acknowledgement fills, kept between them (see ``withOutputs(_:_:)``).
        var outputBuffer: [BrokerSessions.Output] = []
    }

    private init(
        listener: TCPListener,
        webSocketListener: TCPListener?,
        tlsListeners: TLSListeners?,
        configuration: Configuration,
        sessions: BrokerSessions,
        persistence: BrokerPersistence?
    ) {
        self.listener = listener
        self.port = listener.port
        self.webSocketListener = webSocketListener
        self.webSocketPort = webSocketListener?.port
        self.tlsListeners = tlsListeners
        self.tlsPort = tlsListeners?.listener.port
        self.secureWebSocketPort = tlsListeners?.webSocketListener?.port
        self.configuration = configuration
        self.logger = configuration.logger
        self.clock = ElapsedClock(configuration.clock)
        self.outboxLimits = OutboxState.Limits(
            capacity: configuration.maximumQueuedMessagesPerClient,
            byteCapacity: configuration.maximumQueuedBytesPerClient,
            unreadLimit: configuration.maximumUnreadBytesPerClient
        )
        self.persistence = persistence
        self.core = Mutex(Core(sessions: sessions, persistence: persistence))
        if let skipped = configuration.passwordFile?.skippedLines, !skipped.isEmpty {
            self.logger.warning(
                "password file: malformed lines skipped, their users cannot log in",
                metadata: ["lines": skipped.map(\.description).joined(separator: "; ")]
            )
        }
    }

    /// Creates the listening socket (and the WebSocket and TLS ones, if configured) without serving
    /// yet.
    ///
    /// Connections that arrive before ``run()`` is called wait in the listen backlog.
    ///
    /// - Parameters:
    ///   - host: The address to listen on, an IPv4 or IPv6 literal or `"localhost"`. Defaults to
    ///     `"127.0.0.1"`; use `"0.0.0.0"` to accept connections from other machines.
    ///   - port: The TCP port, or 0 (the default) to let the OS choose one; read it from ``port``.
    ///   - configuration: Limits, credentials and logging.
    /// - Returns: A bound broker; call ``run()`` to serve.
    /// - Throws: ``BrokerError`` with code `.invalidConfiguration` for a queue, unread-bytes, in-flight, subscription or connection
    ///   limit below 1, a negative retained or offline-session limit, a maximum packet size outside
    ///   16…268,435,455 bytes, an in-flight window above 65,535, a port out of range or TLS files that
    ///   cannot be used (or no OpenSSL 3 for them), or `.bindFailed` if a socket cannot be bound.
    public static func bind(
        host: String = "127.0.0.1",
        port: Int = 0,
        configuration: Configuration = Configuration()
    ) throws -> MQTTBroker {
        guard (0...65_535).contains(port) else {
            throw BrokerError(.invalidConfiguration, "port \(port) is out of range")
        }
        if let webSocketPort = configuration.webSocketPort, !(0...65_535).contains(webSocketPort) {
            throw BrokerError(.invalidConfiguration, "WebSocket port \(webSocketPort) is out of range")
        }
        guard configuration.maximumPacketSize >= 16, configuration.maximumQueuedMessagesPerClient >= 1,
            configuration.maximumQueuedBytesPerClient >= 1, configuration.maximumUnreadBytesPerClient >= 1,
            configuration.maximumInFlightMessagesPerClient >= 1,
            configuration.maximumInFlightMessagesPerClient <= 65_535,
            configuration.maximumRetainedMessages >= 0, configuration.maximumRetainedBytes >= 0,
            configuration.maximumSubscriptionsPerClient >= 1,
            configuration.maximumOfflineSessions >= 0, configuration.maximumConnections >= 1
        else {
            throw BrokerError(
                .invalidConfiguration,
                "queue, unread-bytes, in-flight, subscription and connection limits must be at least 1 (in-flight at most 65,535), the retained and offline-session limits at least 0, and the packet size at least 16 bytes"
            )
        }
        // A PUBLISH accepted under this size and re-sent with a packet id (2 more bytes) must still have a
        // valid remaining length, which outgoing encoding relies on.
        guard configuration.maximumPacketSize <= MQTTRemainingLength.maximum else {
            throw BrokerError(
                .invalidConfiguration,
                "maximum packet size must not exceed \(MQTTRemainingLength.maximum) bytes"
            )
        }
        let listener: TCPListener
        do {
            listener = try TCPListener.bind(host: host, port: port)
        } catch {
            throw BrokerError(.bindFailed, "cannot listen on \(host):\(port)", underlying: error)
        }
        var webSocketListener: TCPListener?
        if let webSocketPort = configuration.webSocketPort {
            do {
                webSocketListener = try TCPListener.bind(host: host, port: webSocketPort)
            } catch {
                listener.close()
                throw BrokerError(
                    .bindFailed,
                    "cannot listen for WebSocket connections on \(host):\(webSocketPort)",
                    underlying: error
                )
            }
        }
        var tlsListeners: TLSListeners?
        if let tls = configuration.tls {
            do {
                tlsListeners = try Self.bindTLS(tls, host: host)
            } catch {
                listener.close()
                webSocketListener?.close()
                throw error
            }
        }
        let initial: (sessions: BrokerSessions, persistence: BrokerPersistence?)
        do {
            initial = try Self.initialSessions(configuration)
        } catch {
            listener.close()
            webSocketListener?.close()
            tlsListeners?.close()
            throw error
        }
        return MQTTBroker(
            listener: listener,
            webSocketListener: webSocketListener,
            tlsListeners: tlsListeners,
            configuration: configuration,
            sessions: initial.sessions,
            persistence: initial.persistence
        )
    }

    /// Accepts and serves clients until the calling task is cancelled.
    ///
    /// Each connection is served in a child task of a discarding task group, over TCP or, on the
    /// WebSocket and TLS listeners, after the WebSocket opening handshake or the TLS handshake. Cancelling the task that runs this
    /// method closes the listeners and every connection (publishing the wills of clients that had one)
    /// and then returns. Call it once per broker.
    ///
    /// - Throws: `CancellationError` when cancelled; ``BrokerError`` with code `.acceptFailed` if a
    ///   listening socket fails permanently.
    public func run() async throws {
        self.logger.info(
            "broker listening",
            metadata: [
                "port": "\(self.port)", "webSocketPort": "\(self.webSocketPort.map(String.init) ?? "off")",
                "tlsPort": "\(self.tlsPort.map(String.init) ?? "off")",
                "secureWebSocketPort": "\(self.secureWebSocketPort.map(String.init) ?? "off")",
            ]
        )
        defer {
            self.listener.close()
            self.webSocketListener?.close()
            self.tlsListeners?.close()
            let continuations = self.observers.withLock { observers in
                observers.isStopped = true
                defer { observers.continuations = [:] }
                return Array(observers.continuations.values)
            }
            for continuation in continuations { continuation.finish() }
            self.finishPersistence()
            self.logger.info("broker stopped", metadata: ["port": "\(self.port)"])
        }
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await self.sweepDeadlines() }
            group.addTask { await self.serveParkedConnections() }
            if let persistence = self.persistence {
                group.addTask { try await self.writeJournal(to: persistence) }
            }
            if let interval = self.configuration.systemTopicInterval {
                group.addTask { try await self.publishSystemTopics(every: interval) }
            }
            if let webSocketListener = self.webSocketListener {
                group.addTask { try await self.serve(webSocketListener, as: .webSocket) }
            }
            if let tls = self.tlsListeners {
                group.addTask { try await self.serve(tls.listener, as: .tls(tls.context)) }
                if let webSocketListener = tls.webSocketListener {
                    group.addTask { try await self.serve(webSocketListener, as: .secureWebSocket(tls.context)) }
                }
            }
            try await self.serve(self.listener, as: .tcp)
        }
    }

    /// What a listener's connections carry MQTT over.
    private enum ListenerKind {
        case tcp
        case webSocket
        case tls(TLSContext)
        case secureWebSocket(TLSContext)
    }

    /// Accepts connections from `listener` and serves each in a child task until cancelled.
    private func serve(_ listener: TCPListener, as kind: ListenerKind) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            var transientFailures = 0
            while true {
                let socket: TCPConnection
                do {
                    socket = try await listener.accept()
                    transientFailures = 0
                } catch let error as SocketError where Self.isTransient(error) {
                    // Out of descriptors or an aborted handshake: keep serving the existing clients.
                    transientFailures += 1
                    self.logger.warning("accept failed, retrying", metadata: ["error": "\(error)"])
                    try await Task.sleep(for: .milliseconds(min(100 * transientFailures, 1000)))
                    continue
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    try Task.checkCancellation()
                    throw BrokerError(.acceptFailed, "the listening socket failed", underlying: error)
                }
                guard self.admitsConnection(from: socket) else { continue }
                let id = ConnectionID(rawValue: self.nextConnectionID.wrappingAdd(1, ordering: .relaxed).oldValue)
                group.addTask {
                    switch kind {
                    case .tcp:
                        // A parked connection is counted until the task that serves it again closes it.
                        if await ClientConnection(broker: self, socket: socket, id: id).serve() == .parked { return }
                    default:
                        await self.serveFramed(socket, id: id, as: kind)
                    }
                    self.openConnections.subtract(1, ordering: .relaxed)
                }
            }
        }
    }

    /// Serves a connection whose MQTT bytes are framed: over WebSocket, TLS, or both.
    ///
    /// Not inlined into the plain TCP path: a task keeps the memory its deepest chain of async frames
    /// needed until it ends, and the frame of a function that inlined these would be as large as
    /// theirs for every TCP connection too.
    @inline(never)
    private func serveFramed(_ socket: TCPConnection, id: ConnectionID, as kind: ListenerKind) async {
        switch kind {
        case .tcp: break  // served by `serve(_:as:)` itself
        case .webSocket: await self.serveWebSocket(socket, id: id)
        case .tls(let context): await self.serveTLS(socket, id: id, context: context, overWebSocket: false)
        case .secureWebSocket(let context): await self.serveTLS(socket, id: id, context: context, overWebSocket: true)
        }
    }

    /// Counts a new connection, or closes it and logs why when ``Configuration/maximumConnections``
    /// are already open.
    private func admitsConnection(from socket: TCPConnection) -> Bool {
        let open = self.openConnections.add(1, ordering: .relaxed).newValue
        guard open > self.configuration.maximumConnections else { return true }
        self.openConnections.subtract(1, ordering: .relaxed)
        socket.close()
        self.logger.notice(
            "connection refused: too many connections",
            metadata: ["remote": "\(socket.remoteDescription)", "limit": "\(self.configuration.maximumConnections)"]
        )
        return false
    }

    /// The limits of a WebSocket connection: frames and fragmented messages up to the maximum packet
    /// size, at least 64 KiB (the frames a client may fill with several small packets), and a
    /// handshake of at most 8 KiB.
    var webSocketConfiguration: WebSocketConnection.Configuration {
        let limit = max(self.configuration.maximumPacketSize, 1 << 16)
        return WebSocketConnection.Configuration(maximumFrameSize: limit, maximumMessageSize: limit)
    }

    /// Performs the WebSocket opening handshake within the connect timeout, then serves the MQTT
    /// session over the WebSocket connection.
    private func serveWebSocket(_ tcp: TCPConnection, id: ConnectionID) async {
        await self.serve(tcp, id: id, failure: "WebSocket handshake failed") {
            try await WebSocketConnection.accept(tcp, configuration: self.webSocketConfiguration)
        }
    }

    /// Enforces connect timeouts and keep-alives: every 250 ms, closes connections past their deadline.
    /// Also returns the memory of many closed connections to the operating system (see ``MemoryTrim``).
    private func sweepDeadlines() async throws {
        var memoryTrim = MemoryTrim()
        while true {
            try await self.clock.sleep(for: .milliseconds(250))
            let watches = self.watches.withLock { Array($0.values) }
            let now = self.clock.now
            for watch in watches { watch.check(now: now) }
            if memoryTrim.observe(openConnections: self.openConnections.load(ordering: .relaxed)) {
                MemoryTrim.trim()
            }
        }
    }

    private static func isTransient(_ error: SocketError) -> Bool {
        // EMFILE, ENFILE, ENOBUFS, ENOMEM, ECONNABORTED, EPROTO, EPERM (firewall), EINTR.
        [24, 23, 105, 12, 103, 71, 1, 4].contains(error.errno)
    }

    /// Binds a broker, serves it while `body` runs, then stops it.
    ///
    /// The broker is fully stopped (listener and every connection closed) when this returns.
    ///
    /// ```swift
    /// try await MQTTBroker.withRunning { broker in
    ///     // connect clients to 127.0.0.1:\(broker.port)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - host: The address to listen on. Defaults to `"127.0.0.1"`.
    ///   - port: The port, 0 (the default) for any free one.
    ///   - configuration: Limits, credentials and logging.
    ///   - body: Runs while the broker serves.
    /// - Returns: What `body` returns.
    /// - Throws: What ``bind(host:port:configuration:)`` or `body` throws, or ``BrokerError`` if serving
    ///   fails.
    public static func withRunning<Result: Sendable>(
        host: String = "127.0.0.1",
        port: Int = 0,
        configuration: Configuration = Configuration(),
        _ body: (MQTTBroker) async throws -> Result
    ) async throws -> Result {
        let broker = try Self.bind(host: host, port: port, configuration: configuration)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await broker.run() }
            do {
                let result = try await body(broker)
                group.cancelAll()
                try? await group.waitForAll()
                return result
            } catch {
                group.cancelAll()
                try? await group.waitForAll()
                throw error
            }
        }
    }

    /// A snapshot of the broker's counters.
    public var statistics: Statistics {
        self.core.withLock { core in
            Statistics(
                connections: core.sessions.connectionCount,
                sessions: core.sessions.sessions.count,
                subscriptions: core.sessions.subscriptions.count,
                retainedMessages: core.sessions.retained.count,
                refusedRetainedMessages: core.sessions.retained.refusedCount,
                discardedSessions: core.sessions.discardedSessions,
                droppedMessages: core.sessions.droppedMessages + core.droppedQoS0
                    + core.outboxes.values.reduce(0) { $0 + $1.droppedCount }
            )
        }
    }

    /// The queue depths of a connected client, for tests that check the slow-consumer bound.
    ///
    /// - Returns: Packets waiting for the socket writer, QoS 1/2 messages waiting in the session, and
    ///   messages in flight; `nil` if no such session exists.
    package func queueDepths(clientID: String) -> (socket: Int, session: Int, inFlight: Int)? {
        self.core.withLock { core in
            guard let session = core.sessions.session(clientID: clientID) else { return nil }
            let socket = session.connection.flatMap { core.outboxes[$0]?.depth } ?? 0
            return (socket, session.pending.count, session.inFlight.count)
        }
    }

    /// Returns a stream of the connects, disconnects and subscription changes from now on.
    ///
    /// Each call returns an independent stream. It buffers the newest 1,000 events and finishes when
    /// ``run()`` returns (immediately if the broker already stopped). Ending the iteration or cancelling
    /// the iterating task removes the observer.
    public func events() -> BrokerEvents {
        let (stream, continuation) = AsyncStream.makeStream(
            of: BrokerEvent.self,
            bufferingPolicy: .bufferingNewest(1000)
        )
        let id: Int? = self.observers.withLock { observers in
            guard !observers.isStopped else { return nil }
            let id = observers.nextID
            observers.nextID += 1
            observers.continuations[id] = continuation
            return id
        }
        if let id {
            continuation.onTermination = { [weak self] _ in
                _ = self?.observers.withLock { $0.continuations.removeValue(forKey: id) }
            }
        } else {
            continuation.finish()
        }
        return BrokerEvents(base: stream)
    }

    /// Hands an event to every observer.
    func emit(_ event: @autoclosure () -> BrokerEvent) {
        let continuations = self.observers.withLock { observers -> [AsyncStream<BrokerEvent>.Continuation] in
            observers.continuations.isEmpty ? [] : Array(observers.continuations.values)
        }
        guard !continuations.isEmpty else { return }
        let event = event()
        for continuation in continuations { continuation.yield(event) }
    }

    /// A fresh client identifier for a CONNECT with an empty one, unique as [MQTT-3.1.3-6] requires:
    /// an id that a client chose itself and that still has a session in `sessions` is skipped, or the
    /// new client would take that one over. Call it with the core lock held.
    func assignClientID(unusedIn sessions: BrokerSessions) -> String {
        while true {
            let clientID = "coaty-broker-\(self.nextAssignedClientID.wrappingAdd(1, ordering: .relaxed).oldValue)"
            if !sessions.hasSession(clientID: clientID) { return clientID }
        }
    }
}
