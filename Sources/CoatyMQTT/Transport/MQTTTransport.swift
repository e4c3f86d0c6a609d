import CoatyCore
import CoatyMQTTPackets
import CoatySockets
import CoatyTLS
public import CoatyTransport
import CoatyWebSocket
import Synchronization

/// A `Transport` that speaks MQTT 3.1.1 to a broker such as mosquitto, over TCP (`mqtt://`), TLS
/// (`mqtts://`, see ``TLSOptions``) or WebSocket (`ws://`, and `wss://` over TLS).
///
/// Each ``withConnection(_:onMessage:_:)`` call opens one connection: TCP connect (and the TLS
/// handshake for `mqtts://`, the WebSocket opening handshake for `ws://`) and CONNECT/CONNACK within ``Configuration/connectTimeout``, then
/// a reader, a writer and a keep-alive timer run as child tasks while `body` uses the connection. Reconnecting, re-subscribing and the offline queue are the
/// `CommunicationManager`'s job, on top of this type. With ``Configuration/cleanSession`` `false`, the
/// transport carries the client's half of the MQTT session (unacknowledged QoS 1/2 exchanges) from one
/// connection to the next.
///
/// With the default configuration the CONNECT matches coaty-js: MQTT 3.1.1, clean session, keep-alive
/// 60 s, the client identifier and last will from `TransportConnectOptions`.
///
/// ```swift
/// let transport = MQTTTransport(configuration: .init(brokerURL: "mqtt://127.0.0.1:1883"))
/// try await transport.withConnection(.init(clientID: "demo"), onMessage: { print($0.topic) }) { connection in
///     try await connection.subscribe(to: [TopicFilter("demo/#")])
///     try await connection.publish(TransportMessage(topic: "demo/hello", payload: Array("hi".utf8)))
/// }
/// ```
public struct MQTTTransport: Transport {
    /// The settings used for every connection.
    public var configuration: Configuration

    /// The client's half of persistent sessions, shared by this transport's copies.
    private let sessions = MQTTSessionStore()
    /// Which of the configured brokers to try first, shared by this transport's copies.
    let preferredBroker = PreferredBroker()

    /// Creates a transport.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Creates a transport for a broker URL with otherwise default settings.
    public init(brokerURL: String) {
        self.init(configuration: Configuration(brokerURL: brokerURL))
    }

    /// Creates a transport for brokers to fail over between, in order of preference (see
    /// ``Configuration/brokerURLs``), with otherwise default settings.
    public init(brokerURLs: [String]) {
        var configuration = Configuration()
        configuration.brokerURLs = brokerURLs
        self.init(configuration: configuration)
    }

    /// Opens an MQTT connection, runs `body` with it, and closes it when `body` returns or throws.
    ///
    /// Suspends for the TCP connect and the CONNACK, then for as long as `body` runs. On return (or a
    /// throw from `body`) the connection sends DISCONNECT, so the broker discards the last will; when
    /// the task is cancelled the socket is closed without DISCONNECT, so the broker publishes the will.
    ///
    /// When the connection is lost while `body` runs (I/O error, broker closed it, malformed or oversized
    /// packet, protocol violation, no PINGRESP within the keep-alive), every pending and later operation
    /// on the connection throws, `TransportConnection.waitUntilClosed()` returns, and this method
    /// throws `.connectionLost` once `body` has ended. Swift cannot cancel the calling task from inside,
    /// so `body` ends through those errors (or by awaiting `waitUntilClosed()`), not by cancellation.
    ///
    /// - Parameters:
    ///   - options: The client identifier and last will.
    ///   - onMessage: Called on the reader task for every received PUBLISH, in order; must not block.
    ///     A QoS 2 message is delivered once even if the broker resends it.
    ///   - body: Works with the connection.
    /// - Returns: What `body` returns.
    /// - Throws: `TransportError`: `.invalidConfiguration` (bad broker URL, a password without a user
    ///   name), `.connectFailed` (TCP or handshake I/O failed; for `mqtts://` also a TLS failure such
    ///   as an untrusted certificate, with its `TLSError` as the underlying error), `.timedOut` (no
    ///   connection or CONNACK within the connect timeout),
    ///   `.connectionRefused` (CONNACK return code), `.protocolViolation` (bad handshake), or
    ///   `.connectionLost`; `CancellationError`; what `body` throws.
    public func withConnection<Result: Sendable>(
        _ options: TransportConnectOptions,
        onMessage: @escaping @Sendable (TransportMessage) -> Void,
        _ body: (any TransportConnection) async throws -> Result
    ) async throws -> Result {
        try await self.withMQTTConnection(options, onMessage: onMessage) { try await body($0) }
    }

    /// Like ``withConnection(_:onMessage:_:)``, with the concrete connection type (for subscriptions
    /// at QoS 1 and 2, tools and tests).
    package func withMQTTConnection<Result: Sendable>(
        _ options: TransportConnectOptions,
        onMessage: @escaping @Sendable (TransportMessage) -> Void,
        _ body: (MQTTConnection) async throws -> Result
    ) async throws -> Result {
        let configuration = {
            // The transport's own logger, else the one whoever connects hands over.
            var configuration = self.configuration
            configuration.logger = configuration.logger ?? options.logger?.labelled("coaty.mqtt")
            return configuration
        }()
        let brokers: [MQTTBrokerAddress]
        do {
            brokers = try configuration.brokerURLs.map { try MQTTBrokerAddress(parsing: $0) }
        } catch {
            throw TransportError(.invalidConfiguration, "\(error)", underlying: error)
        }
        guard !brokers.isEmpty else { throw TransportError(.invalidConfiguration, "no broker URL configured") }
        let connect = try Self.connectPacket(options, configuration: configuration)
        let logger = configuration.effectiveLogger

        // Each broker in turn, from the preferred one, until one answers; the last failure if none does.
        let first = self.preferredBroker.index.withLock { $0 } % brokers.count
        var attempt: (index: Int, connected: (MQTTConnection, MQTTPacketDecoder, Bool))?
        var lastFailure: (any Error)?
        for offset in 0..<brokers.count where attempt == nil {
            let index = (first + offset) % brokers.count
            do {
                attempt = (
                    index,
                    try await Self.connect(
                        to: brokers[index],
                        connect,
                        configuration: configuration,
                        onMessage: onMessage
                    )
                )
            } catch {
                if Task.isCancelled || brokers.count == 1 { throw error }
                logger.info("cannot connect to \(brokers[index]): \(error)")
                lastFailure = error
            }
        }
        guard let (index, (connection, decoder, sessionPresent)) = attempt else {
            throw lastFailure ?? CancellationError()
        }
        let broker = brokers[index]
        self.preferredBroker.index.withLock { $0 = index }
        // A lost connection sends the next attempt to the next broker first.
        defer { if connection.failure.map({ $0.code != .connectionClosed }) == true { self.preferNext(after: index) } }
        logger.info("connected to \(broker) as \(options.clientID)")
        let sessionKey = MQTTSessionStore.key(broker: broker, clientID: options.clientID)
        // Taking the state also discards it, which is what a clean session asks for.
        let session = self.sessions.take(sessionKey)
        if !configuration.cleanSession {
            if sessionPresent {
                connection.resume(session)
            } else if !session.isEmpty {
                // The broker kept nothing of the session (it expired, or the broker restarted without
                // persistence), so our half names identifiers it no longer knows. MQTT 5 makes
                // discarding it a MUST; MQTT 3.1.1 leaves the choice to the client.
                logger.warning(
                    "\(broker) has no session for \(options.clientID): discarding \(session.outbound.count) "
                        + "unacknowledged publication(s) and \(session.receivedQoS2.count) QoS 2 receipt(s)"
                )
            }
        }
        // Every way out of the task group below has failed or closed the connection first, so what
        // the session leaves is final.
        defer {
            if !configuration.cleanSession { self.sessions.keep(connection.sessionLeft, for: sessionKey) }
        }

        return try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await connection.runReader(decoder: decoder) }
            group.addTask { await connection.runWriter() }
            group.addTask { await connection.runKeepAlive() }
            group.addTask { await connection.runAcknowledgementWatchdog() }
            defer { group.cancelAll() }
            let result: Result
            do {
                result = try await body(connection)
            } catch {
                if let failure = connection.failure, failure.code != .connectionClosed {
                    throw Self.lostError(failure, broker: broker, logger: logger)
                }
                if Task.isCancelled || error is CancellationError {
                    connection.fail(TransportError(.connectionClosed, "the connection was cancelled"))
                } else {
                    await connection.disconnect()
                }
                throw error
            }
            if Task.isCancelled {
                connection.fail(TransportError(.connectionClosed, "the connection was cancelled"))
            } else {
                await connection.disconnect()
            }
            if let failure = connection.failure, failure.code != .connectionClosed {
                throw Self.lostError(failure, broker: broker, logger: logger)
            }
            logger.info("disconnected from \(broker)")
            return result
        }
    }

    /// Opens the byte stream to the broker: a TCP connection, a TLS connection for `mqtts://`, or a
    /// WebSocket connection for `ws://` (over TLS for `wss://`).
    ///
    /// - Throws: `TransportError` `.connectFailed`; `CancellationError`.
    static func open(
        _ broker: MQTTBrokerAddress,
        configuration: Configuration
    ) async throws -> any ByteStreamConnection {
        do {
            // Frames from the broker may hold several packets: allow at least 64 KiB beyond the packet
            // limit's worth.
            let webSocket = WebSocketConnection.Configuration(
                maximumFrameSize: max(configuration.maximumPacketSize, 1 << 16)
            )
            if broker.usesTLS {
                let context = try TLSContext(configuration.tls.contextConfiguration)
                let tls = try await TLSConnection.connect(
                    host: broker.host,
                    port: broker.port,
                    serverName: configuration.tls.serverName,
                    context: context
                )
                guard let path = broker.webSocketPath else { return tls }
                return try await WebSocketConnection.connect(
                    over: tls,
                    host: broker.host,
                    port: broker.port,
                    path: path,
                    configuration: webSocket
                )
            }
            guard let path = broker.webSocketPath else {
                return try await TCPConnection.connect(host: broker.host, port: broker.port)
            }
            return try await WebSocketConnection.connect(
                host: broker.host,
                port: broker.port,
                path: path,
                configuration: webSocket
            )
        } catch let error as CancellationError {
            throw error
        } catch {
            throw TransportError(.connectFailed, "cannot connect to \(broker): \(error)", underlying: error)
        }
    }

    private static func lostError(_ failure: TransportError, broker: MQTTBrokerAddress, logger: CoatyLogger)
        -> TransportError
    {
        logger.warning("connection to \(broker) lost: \(failure.message)")
        // A loss is reported as is; another failure (a protocol violation, say) becomes a loss that
        // names it once, as its underlying error, instead of repeating its message.
        if failure.code == .connectionLost { return failure }
        return TransportError(.connectionLost, "the connection to \(broker) failed", underlying: failure)
    }

    /// Builds the CONNECT packet for `options`.
    static func connectPacket(
        _ options: TransportConnectOptions,
        configuration: Configuration
    ) throws -> MQTTConnectPacket {
        var will: MQTTWill?
        if let lastWill = options.lastWill {
            do {
                try TopicName.validate(lastWill.topic)
            } catch {
                throw TransportError(.invalidArgument, "invalid last-will topic: \(error)", underlying: error)
            }
            will = MQTTWill(
                topic: lastWill.topic,
                payload: lastWill.payload,
                qos: MQTTQoS(lastWill.qos),
                retain: lastWill.retain
            )
        }
        if configuration.password != nil && configuration.username == nil {
            throw TransportError(.invalidConfiguration, "a password requires a user name")
        }
        return MQTTConnectPacket(
            clientID: options.clientID,
            cleanSession: configuration.cleanSession,
            keepAliveSeconds: configuration.keepAliveSeconds,
            will: will,
            username: configuration.username,
            password: configuration.password.map { Array($0.utf8) }
        )
    }
}
