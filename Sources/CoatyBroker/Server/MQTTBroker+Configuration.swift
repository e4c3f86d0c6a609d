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
        /// packet is disconnected. Defaults to 1 MiB.
        public var maximumPacketSize: Int
        /// How many messages wait for one client before the slow-consumer policy applies.
        ///
        /// - QoS 1/2 messages beyond the in-flight window wait in the session queue (also while a
        ///   persistent client is offline); when it is full, the **oldest** waiting message is dropped
        ///   and counted in ``MQTTBroker/Statistics/droppedMessages``.
        /// - QoS 0 messages for an online client are dropped and counted when this many packets are
        ///   already waiting to be written to its socket. QoS 0 is not queued for offline clients.
        /// - A client with 2 × (this + ``maximumInFlightMessagesPerClient``) + 16 packets waiting for its
        ///   socket (it sends but never reads its acknowledgements) is disconnected.
        ///
        /// The bound counts messages, not bytes: with messages of up to ``maximumPacketSize``, the
        /// default lets a client that stops reading hold about 1 GiB.
        ///
        /// Defaults to 1000.
        public var maximumQueuedMessagesPerClient: Int
        /// How many QoS 1/2 messages may be unacknowledged towards one client at once. Defaults to 20,
        /// like mosquitto's `max_inflight_messages`.
        public var maximumInFlightMessagesPerClient: Int
        /// How many topics may hold a retained message; new topics beyond it are not retained (the
        /// message is still delivered) and counted. Defaults to 100,000.
        public var maximumRetainedMessages: Int
        /// The username and password every client must present, or `nil` to allow anonymous clients
        /// (the default).
        ///
        /// A CONNECT without a username is refused with return code 5 (not authorized); a wrong username
        /// or password with return code 4 (bad username or password).
        public var credentials: Credentials?
        /// How long a new connection may take to send its CONNECT before it is closed. Defaults to 10 s.
        public var connectTimeout: Duration
        /// Where the broker logs: connects and disconnects at `.info`, subscriptions and messages at
        /// `.debug`, protocol violations at `.notice`. Defaults to a logger that discards everything.
        public var logger: Logger

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - maximumPacketSize: The largest accepted packet in bytes. Defaults to 1 MiB.
        ///   - maximumQueuedMessagesPerClient: The per-client queue bound. Defaults to 1000.
        ///   - maximumInFlightMessagesPerClient: The per-client QoS 1/2 window. Defaults to 20.
        ///   - maximumRetainedMessages: The number of retained topics. Defaults to 100,000.
        ///   - credentials: Required credentials, or `nil` for anonymous access. Defaults to `nil`.
        ///   - connectTimeout: The time allowed for the first packet. Defaults to 10 seconds.
        ///   - logger: The logger. Defaults to `Logger.disabled`.
        public init(
            maximumPacketSize: Int = 1 << 20,
            maximumQueuedMessagesPerClient: Int = 1000,
            maximumInFlightMessagesPerClient: Int = 20,
            maximumRetainedMessages: Int = 100_000,
            credentials: Credentials? = nil,
            connectTimeout: Duration = .seconds(10),
            logger: Logger = .disabled
        ) {
            self.maximumPacketSize = maximumPacketSize
            self.maximumQueuedMessagesPerClient = maximumQueuedMessagesPerClient
            self.maximumInFlightMessagesPerClient = maximumInFlightMessagesPerClient
            self.maximumRetainedMessages = maximumRetainedMessages
            self.credentials = credentials
            self.connectTimeout = connectTimeout
            self.logger = logger
        }
    }

    /// A username and password pair that clients must present.
    public struct Credentials: Sendable, Hashable {
        /// The required username.
        public var username: String
        /// The required password, compared as its UTF-8 bytes.
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
        /// Messages dropped by the slow-consumer policy (full session queues and full socket queues).
        public var droppedMessages: Int
    }
}
