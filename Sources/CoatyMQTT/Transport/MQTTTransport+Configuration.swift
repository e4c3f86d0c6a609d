public import CoatyCore
import CoatyTransport

extension MQTTTransport {
    /// Settings of an ``MQTTTransport``. The defaults are those coaty-js uses.
    public struct Configuration: Sendable {
        /// The broker URLs, in order of preference: `mqtt://host:port` (or `tcp://`), port 1883 if
        /// omitted; `mqtts://host:port` for MQTT over TLS (see ``tls``), port 8883 if omitted;
        /// `ws://host:port/path` for MQTT over WebSocket, port 80 and path `/` if omitted; or
        /// `wss://host:port/path` for that over TLS, port 443 if omitted.
        ///
        /// With more than one, a connection attempt tries them in turn until one answers, starting
        /// with the one that answered last, or, after that one's connection was lost, with the next;
        /// it fails only when none answers (so a manager's reconnect backoff applies per round). The
        /// brokers must share their messages (a cluster, or bridged), or agents that end up on
        /// different ones do not hear each other.
        public var brokerURLs: [String]
        /// The first of ``brokerURLs``; setting it leaves that one broker.
        public var brokerURL: String {
            get { self.brokerURLs.first ?? "" }
            set { self.brokerURLs = [newValue] }
        }
        /// How `mqtts://` and `wss://` connections are secured; by default the broker's certificate is verified
        /// against the system's trust store. Unused for other schemes.
        public var tls: TLSOptions
        /// The MQTT keep-alive interval: the client sends PINGREQ when idle and declares the link dead
        /// when a PINGREQ stays unanswered, at most one keep-alive after the last packet received.
        /// Whole seconds on the wire; `.zero` disables keep-alive. Defaults to 60 s.
        public var keepAlive: Duration
        /// Whether the broker discards earlier session state. Defaults to `true` (Coaty's setting).
        ///
        /// With `false`, the broker keeps the subscriptions and queues QoS 1/2 messages while the client
        /// is offline, and the transport keeps the client's half of the session in memory from one
        /// connection to the next: QoS 1/2 publications not yet acknowledged when a connection fails
        /// are sent again on the next connection with the same client identifier, if the broker kept
        /// the session [MQTT-4.4.0-1] (their callers get `.connectionLost` caused by
        /// ``MQTTPublicationKept``, and must not publish them again), and a QoS 2 message the broker
        /// sends again is not delivered twice.
        public var cleanSession: Bool
        /// The user name sent in CONNECT, if any.
        public var username: String?
        /// The password sent in CONNECT, if any (requires ``username``).
        public var password: String?
        /// The largest packet accepted from the broker, fixed header included; a larger one closes the
        /// connection before it is buffered. Defaults to 16 MiB.
        public var maximumPacketSize: Int
        /// How long to wait for the TCP connection and the CONNACK. Defaults to 30 s (MQTT.js).
        public var connectTimeout: Duration
        /// How long the broker may take to acknowledge a SUBSCRIBE, UNSUBSCRIBE or QoS 1/2 PUBLISH
        /// before the connection is considered broken and closed with `.connectionLost`, or `nil` to
        /// wait for ever. Defaults to 30 s.
        ///
        /// The keep-alive alone does not notice a broker that answers PINGREQ but never a SUBSCRIBE:
        /// the caller would wait until cancelled. An overdue acknowledgement is noticed within 1½ times
        /// this timeout, counted from when the packet was queued; a link too slow to write the queued
        /// packets in that time counts as broken too.
        public var acknowledgementTimeout: Duration?
        /// How many QoS 1 and 2 publications may await acknowledgement at once; further publishers wait
        /// for a free slot, in order. Defaults to 64.
        public var maximumInFlight: Int
        /// The maximum QoS requested for subscriptions made through `TransportConnection`'s
        /// `subscribe(to:)`. Defaults to QoS 0, as coaty-js subscribes.
        public var subscriptionQoS: QualityOfService
        /// Where connection events are logged; `nil` (the default) logs to the logger of whoever
        /// connects (a `CommunicationManager` hands over its own), labelled `coaty.mqtt`.
        public var logger: CoatyLogger?

        /// ``logger``, or a disabled one.
        var effectiveLogger: CoatyLogger { self.logger ?? .disabled }
        /// The clock that times the keep-alive, the connect and flush timeouts and the acknowledgement
        /// timeout. Defaults to `ContinuousClock`; tests pass a clock they advance by hand.
        public var clock: any Clock<Duration>

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - brokerURL: The broker, for example `"mqtt://127.0.0.1:1883"` or `"ws://127.0.0.1:9883/mqtt"`.
        ///   - failoverBrokerURLs: Brokers to try, in order, when `brokerURL` does not answer or its
        ///     connection is lost (see ``brokerURLs``). Defaults to none.
        ///   - keepAlive: The keep-alive interval; defaults to 60 s.
        ///   - cleanSession: Defaults to `true`.
        ///   - username: Defaults to none.
        ///   - password: Defaults to none.
        ///   - maximumPacketSize: Defaults to 16 MiB.
        ///   - connectTimeout: Defaults to 30 s.
        ///   - acknowledgementTimeout: Defaults to 30 s.
        ///   - maximumInFlight: Defaults to 64.
        ///   - subscriptionQoS: Defaults to QoS 0.
        ///   - logger: Defaults to none: the connecting manager's logger.
        ///   - clock: Defaults to `ContinuousClock()`.
        ///   - tls: The TLS options for `mqtts://`; defaults to verifying against the system's CAs.
        public init(
            brokerURL: String = "mqtt://127.0.0.1:1883",
            failoverBrokerURLs: [String] = [],
            keepAlive: Duration = .seconds(60),
            cleanSession: Bool = true,
            username: String? = nil,
            password: String? = nil,
            maximumPacketSize: Int = 16 * 1024 * 1024,
            connectTimeout: Duration = .seconds(30),
            acknowledgementTimeout: Duration? = .seconds(30),
            maximumInFlight: Int = 64,
            subscriptionQoS: QualityOfService = .atMostOnce,
            logger: CoatyLogger? = nil,
            clock: any Clock<Duration> = ContinuousClock(),
            tls: TLSOptions = TLSOptions()
        ) {
            self.brokerURLs = [brokerURL] + failoverBrokerURLs
            self.tls = tls
            self.keepAlive = keepAlive
            self.cleanSession = cleanSession
            self.username = username
            self.password = password
            self.maximumPacketSize = maximumPacketSize
            self.connectTimeout = connectTimeout
            self.acknowledgementTimeout = acknowledgementTimeout
            self.maximumInFlight = maximumInFlight
            self.subscriptionQoS = subscriptionQoS
            self.logger = logger
            self.clock = clock
        }

        /// The keep-alive in whole seconds as sent in CONNECT (rounded up, at most 65,535).
        var keepAliveSeconds: UInt16 {
            let (seconds, attoseconds) = self.keepAlive.components
            guard seconds >= 0, self.keepAlive > .zero else { return 0 }
            let rounded = seconds + (attoseconds > 0 ? 1 : 0)
            return UInt16(clamping: rounded)
        }
    }
}
