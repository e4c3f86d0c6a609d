public import CoatyCore

extension MQTTBroker {
    /// Settings that control an ``MQTTBroker``: limits, credentials, timeouts and logging.
    ///
    /// Every limit is per client unless stated otherwise, so that one misbehaving client cannot take
    /// memory from the others. See `Docs/Broker.md` for the policies in full.
    public struct Configuration: Sendable {
        /// The largest packet accepted from a client, in bytes, fixed header included.
        ///
        /// Checked from the fixed header before the body is buffered; a client that announces a larger
        /// packet is disconnected, logged at `.notice` with its client id and the packet's size.
        /// Defaults to 16 MiB, the largest packet a Coaty agent's MQTT client accepts by default, so
        /// every message an agent can receive passes (mosquitto accepts up to MQTT's 256 MiB).
        public var maximumPacketSize: Int
        /// How many client connections may be open at once (broker-wide), counted from the accept; one
        /// more is closed at once and logged at `.notice`. Defaults to 10,000 (about 100 MiB of idle
        /// connections, kernel buffers included); mosquitto's `max_connections` is unlimited by default.
        public var maximumConnections: Int
        /// How many bytes the unfinished packets of all clients may hold (broker-wide).
        ///
        /// A packet is buffered until its last byte arrives, up to ``maximumPacketSize`` per client; a
        /// client whose unfinished packet takes the total beyond this is disconnected and logged at
        /// `.notice`, so that many clients sending large packets slowly cannot exhaust memory.
        /// Defaults to 64 MiB; a bound below ``maximumPacketSize`` counts as that size.
        public var maximumUnfinishedPacketBytes: Int
        /// How many messages wait for one client before the slow-consumer policy applies.
        ///
        /// - QoS 1/2 messages beyond the in-flight window wait in the session queue (also while a
        ///   persistent client is offline); when it is full, the **oldest** waiting message is dropped
        ///   and counted in ``MQTTBroker/Statistics/droppedMessages``.
        /// - QoS 0 messages for an online client are dropped and counted when this many packets are
        ///   already waiting to be written to its socket. QoS 0 is not queued for offline clients.
        ///
        /// ``maximumQueuedBytesPerClient`` bounds the same queues by their bytes.
        ///
        /// Defaults to 1000.
        public var maximumQueuedMessagesPerClient: Int
        /// How many bytes of messages (topics and payloads) wait for one client before the
        /// slow-consumer policy applies, beside ``maximumQueuedMessagesPerClient``.
        ///
        /// The session queue drops its **oldest** messages until a new one fits; QoS 0 messages for
        /// the socket are dropped when they would not fit. An empty queue always takes one message, so
        /// a message of up to ``maximumPacketSize`` gets through to a client that reads. Messages in
        /// flight are bounded by ``maximumInFlightMessagesPerClient`` instead, and everything waiting
        /// for the socket by ``maximumUnreadBytesPerClient``. So a client that stops reading holds at
        /// most about this + ``maximumUnreadBytesPerClient`` bytes (80 MiB with the defaults), where a
        /// bound on messages alone let it hold about 2 GiB of 1 MiB messages. Defaults to 16 MiB;
        /// mosquitto's `max_queued_bytes` is unlimited by default.
        public var maximumQueuedBytesPerClient: Int
        /// How many bytes queued to one client it may leave unread before it is a slow consumer and is
        /// disconnected (logged at `.notice` with the client id).
        ///
        /// Unread bytes are the encoded packets waiting for the client's socket, including the batch
        /// being written. While they are at least half of this, or 1 MiB, whichever is smaller, the
        /// broker does not handle more of the client's packets, so a client that pipelines requests
        /// gets its replies at the pace it reads them and is never disconnected; one that stops reading
        /// while the broker holds back its packets is disconnected after 1.5 × its keep-alive. A QoS 0
        /// message that would exceed it is dropped instead, so what reaches it is QoS 1/2 messages in
        /// flight (up to ``maximumInFlightMessagesPerClient`` of them) and acknowledgements. A packet
        /// into an empty queue always fits. Defaults to 64 MiB.
        public var maximumUnreadBytesPerClient: Int
        /// How many QoS 1/2 messages may be unacknowledged towards one client at once. Defaults to 20,
        /// like mosquitto's `max_inflight_messages`.
        public var maximumInFlightMessagesPerClient: Int
        /// How many topics may hold a retained message (broker-wide); a message for a new topic beyond
        /// it is not retained (it is still delivered) and is counted in
        /// ``MQTTBroker/Statistics/refusedRetainedMessages``. Defaults to 100,000.
        public var maximumRetainedMessages: Int
        /// How many bytes of topics and payloads the retained messages may hold (broker-wide).
        ///
        /// A retained message that would not fit is not retained (it is still delivered) and is
        /// counted in ``MQTTBroker/Statistics/refusedRetainedMessages``; the message it would have
        /// replaced is deleted, so new subscribers never get an older value than the last one
        /// published. Without it, 100,000 topics of 1 MiB could take 100 GiB. Defaults to 64 MiB.
        public var maximumRetainedBytes: Int
        /// How many topic filters one client may be subscribed to. A SUBSCRIBE for a new filter beyond
        /// it is answered with return code 0x80 (failure) for that filter; filters the client already
        /// holds can still be resubscribed. Defaults to 10,000.
        ///
        /// Without a bound, a client could grow the broker without limit: 90,000 short filters in one
        /// 0.9 MB SUBSCRIBE take 30–60 MB. Coaty agents hold one filter per observation and per
        /// outstanding request.
        public var maximumSubscriptionsPerClient: Int
        /// How many persistent sessions (CleanSession=0) are kept while their client is offline
        /// (broker-wide). When one more goes offline, the session offline longest is discarded with its
        /// queued messages, which are counted in ``MQTTBroker/Statistics/droppedMessages``; the session
        /// is counted in ``MQTTBroker/Statistics/discardedSessions``. Defaults to 10,000.
        ///
        /// Without a bound, clients connecting with new client ids and CleanSession=0 could grow the
        /// broker without limit. `0` keeps no offline sessions at all.
        public var maximumOfflineSessions: Int
        /// A single user name and password that clients may present, or `nil` (the default).
        ///
        /// It is one more user beside those of ``passwordFile``: a client is accepted if either accepts
        /// its user name and password. Setting it also makes ``allowAnonymous`` default to `false`.
        public var credentials: Credentials?
        /// The users and password hashes of a mosquitto password file, or `nil` (the default).
        ///
        /// A client that presents a user name must match a user of the file (or ``credentials``), or it
        /// is refused with CONNACK 4 (bad user name or password). Load one with
        /// `PasswordFile(contentsOfFile:)`; skipped malformed lines are logged when the broker binds.
        public var passwordFile: PasswordFile?
        /// Which topics each client may read, write and subscribe to, or `nil` (the default) to allow
        /// everything. Load one with `AccessControlList(contentsOfFile:)`.
        ///
        /// A refused subscription gets SUBACK return code 0x80 for that filter; a refused PUBLISH is
        /// dropped and logged at `.notice` (a QoS 1/2 one still acknowledged, as mosquitto does); a
        /// message is delivered only to clients that may read its topic; a will the client may not
        /// write is discarded at CONNECT.
        public var accessControlList: AccessControlList?
        /// Whether clients may connect without a user name; `nil` (the default) allows them unless
        /// ``passwordFile`` or ``credentials`` is set, as mosquitto 2 does with a password file. A
        /// refused anonymous CONNECT gets CONNACK 5 (not authorized). See ``allowsAnonymousClients``.
        public var allowAnonymous: Bool?
        /// How long a new connection may take to send its CONNECT before it is closed. Defaults to 10 s.
        ///
        /// On the WebSocket listener the opening handshake has this long too, and the CONNECT as long
        /// again after it.
        public var connectTimeout: Duration
        /// The port of a second listener for MQTT over WebSocket (RFC 6455: binary frames, subprotocol
        /// `mqtt` or `mqttv3.1`, any request path), as browser clients such as mqtt.js connect; `0` for
        /// a free port (read it from ``MQTTBroker/webSocketPort``), `nil` (the default) for none.
        ///
        /// It listens on the same host as the TCP listener. WebSocket frames and fragmented messages
        /// larger than ``maximumPacketSize`` (at least 64 KiB) close the connection with status 1009;
        /// the opening handshake may be at most 8 KiB (431 beyond it), and a malformed one is answered
        /// with 400 and closed.
        public var webSocketPort: Int?
        /// A third listener for MQTT over TLS (`mqtts://`), or `nil` (the default) for none. It
        /// listens on the same host as the TCP listener; the TLS handshake counts towards
        /// ``connectTimeout``, and the CONNECT has as long again after it.
        public var tls: TLSListener?
        /// How often the broker publishes its statistics to the `$SYS/broker/…` topics (retained, QoS 0,
        /// only the values that changed, as mosquitto does), or `nil` for never. Defaults to 10 s, like
        /// mosquitto's `sys_interval`.
        ///
        /// The topics are `version`, `uptime` ("N seconds"), `clients/connected`,
        /// `messages/received`, `messages/sent`, `bytes/received` and `bytes/sent`, each under
        /// `$SYS/broker/`. A subscription to `#` does not match them [MQTT-4.7.2-1]; subscribe to
        /// `$SYS/#`.
        public var systemTopicInterval: Duration?
        /// Where the broker keeps persistent sessions and retained messages across restarts, or `nil`
        /// (the default) to keep them in memory only, as mosquitto does without `persistence true`.
        /// See ``MQTTBroker/Persistence`` for what is kept and what a crash may lose.
        public var persistence: Persistence?
        /// Where the broker logs: connects and disconnects at `.info`, subscriptions and messages at
        /// `.debug`, protocol violations at `.notice`. Defaults to a logger that discards everything.
        public var logger: CoatyLogger
        /// The clock of ``connectTimeout`` and of the keep-alive deadlines, and of the sweeper that
        /// checks them. Defaults to `ContinuousClock`; a test gives a clock it moves by hand.
        public var clock: any Clock<Duration> = ContinuousClock()

        /// Whether clients without a user name are accepted: ``allowAnonymous``, or by default whether
        /// neither ``passwordFile`` nor ``credentials`` is set.
        public var allowsAnonymousClients: Bool {
            self.allowAnonymous ?? (self.passwordFile == nil && self.credentials == nil)
        }

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - maximumPacketSize: The largest accepted packet in bytes. Defaults to 16 MiB.
        ///   - maximumConnections: The open connections (broker-wide). Defaults to 10,000.
        ///   - maximumUnfinishedPacketBytes: The bytes of unfinished packets (broker-wide). Defaults to
        ///     64 MiB.
        ///   - maximumQueuedMessagesPerClient: The per-client queue bound. Defaults to 1000.
        ///   - maximumQueuedBytesPerClient: The per-client queue bound in bytes. Defaults to 16 MiB.
        ///   - maximumUnreadBytesPerClient: The bytes a client may leave unread. Defaults to 64 MiB.
        ///   - maximumInFlightMessagesPerClient: The per-client QoS 1/2 window. Defaults to 20.
        ///   - maximumRetainedMessages: The number of retained topics. Defaults to 100,000.
        ///   - maximumRetainedBytes: The bytes of retained messages. Defaults to 64 MiB.
        ///   - maximumSubscriptionsPerClient: The topic filters per client. Defaults to 10,000.
        ///   - maximumOfflineSessions: The persistent sessions kept offline. Defaults to 10,000.
        ///   - credentials: A user name and password clients may present. Defaults to `nil`.
        ///   - passwordFile: The users of a mosquitto password file. Defaults to `nil`.
        ///   - accessControlList: The topic access rules. Defaults to `nil` (everything allowed).
        ///   - allowAnonymous: Whether clients without a user name are accepted; `nil` (the default)
        ///     accepts them unless `passwordFile` or `credentials` is set.
        ///   - connectTimeout: The time allowed for the first packet. Defaults to 10 seconds.
        ///   - webSocketPort: The WebSocket listener's port, 0 for any; `nil` (the default) for none.
        ///   - tls: The TLS listener; `nil` (the default) for none.
        ///   - systemTopicInterval: How often `$SYS` statistics are published. Defaults to 10 s.
        ///   - persistence: The data directory and sync interval; `nil` (the default) for none.
        ///   - logger: The logger. Defaults to `CoatyLogger.disabled`.
        public init(
            maximumPacketSize: Int = 16 << 20,
            maximumConnections: Int = 10_000,
            maximumUnfinishedPacketBytes: Int = 64 << 20,
            maximumQueuedMessagesPerClient: Int = 1000,
            maximumQueuedBytesPerClient: Int = 16 << 20,
            maximumUnreadBytesPerClient: Int = 64 << 20,
            maximumInFlightMessagesPerClient: Int = 20,
            maximumRetainedMessages: Int = 100_000,
            maximumRetainedBytes: Int = 64 << 20,
            maximumSubscriptionsPerClient: Int = 10_000,
            maximumOfflineSessions: Int = 10_000,
            credentials: Credentials? = nil,
            passwordFile: PasswordFile? = nil,
            accessControlList: AccessControlList? = nil,
            allowAnonymous: Bool? = nil,
            connectTimeout: Duration = .seconds(10),
            webSocketPort: Int? = nil,
            tls: TLSListener? = nil,
            systemTopicInterval: Duration? = .seconds(10),
            persistence: Persistence? = nil,
            logger: CoatyLogger = .disabled
        ) {
            self.maximumPacketSize = maximumPacketSize
            self.maximumConnections = maximumConnections
            self.maximumUnfinishedPacketBytes = maximumUnfinishedPacketBytes
            self.maximumQueuedMessagesPerClient = maximumQueuedMessagesPerClient
            self.maximumQueuedBytesPerClient = maximumQueuedBytesPerClient
            self.maximumUnreadBytesPerClient = maximumUnreadBytesPerClient
            self.maximumInFlightMessagesPerClient = maximumInFlightMessagesPerClient
            self.maximumRetainedMessages = maximumRetainedMessages
            self.maximumRetainedBytes = maximumRetainedBytes
            self.maximumSubscriptionsPerClient = maximumSubscriptionsPerClient
            self.maximumOfflineSessions = maximumOfflineSessions
            self.credentials = credentials
            self.passwordFile = passwordFile
            self.accessControlList = accessControlList
            self.allowAnonymous = allowAnonymous
            self.connectTimeout = connectTimeout
            self.webSocketPort = webSocketPort
            self.tls = tls
            self.systemTopicInterval = systemTopicInterval
            self.persistence = persistence
            self.logger = logger
        }
    }

    /// A user name and password pair that clients may present (see ``Configuration/credentials``).
    public struct Credentials: Sendable, Hashable {
        /// The user name.
        public var username: String
        /// The password, compared as its UTF-8 bytes.
        public var password: String

        /// Creates credentials.
        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }
    }

    /// A snapshot of the broker's counters.
    public struct Statistics: Sendable, Hashable {
        /// Open client connections that have completed CONNECT.
        public var connections: Int
        /// Sessions held, online and offline.
        public var sessions: Int
        /// (session, filter) subscriptions.
        public var subscriptions: Int
        /// Topics with a retained message.
        public var retainedMessages: Int
        /// Retained messages not stored because the store was full (see
        /// ``Configuration/maximumRetainedMessages`` and ``Configuration/maximumRetainedBytes``).
        public var refusedRetainedMessages: Int
        /// Offline persistent sessions discarded because more than
        /// ``Configuration/maximumOfflineSessions`` were offline.
        public var discardedSessions: Int
        /// Messages dropped by the slow-consumer policy (full session queues and full socket queues) and
        /// with discarded offline sessions.
        public var droppedMessages: Int
    }
}
