/// A CONNECT packet: the first packet a client sends on a connection (§3.1).
///
/// The decoder only produces packets with protocol name `"MQTT"` and level 4; any other level is
/// reported as ``MQTTDecodingError/unsupportedProtocolLevel(_:)`` so a broker can answer CONNACK
/// return code 1. An empty ``clientID`` with ``cleanSession`` `false` decodes successfully: the broker
/// decides to answer return code 2 [MQTT-3.1.3-8].
package struct MQTTConnectPacket: Sendable, Hashable {
    /// The protocol level the packet carries; 4 for MQTT 3.1.1.
    ///
    /// Encoding writes this value, so tests can produce CONNECTs with other levels.
    package var protocolLevel: UInt8
    /// The client identifier; may be empty when ``cleanSession`` is `true`.
    package var clientID: String
    /// Whether the server discards any previous session and starts a new one.
    package var cleanSession: Bool
    /// The keep-alive interval in seconds; 0 disables keep-alive.
    package var keepAliveSeconds: UInt16
    /// The last-will message, published by the server if the connection ends without DISCONNECT.
    package var will: MQTTWill?
    /// The user name, if any.
    package var username: String?
    /// The password, binary data; only allowed together with a ``username`` [MQTT-3.1.2-22].
    package var password: [UInt8]?

    /// The protocol level of MQTT 3.1.1.
    package static let protocolLevel311: UInt8 = 4

    /// Creates a CONNECT packet.
    package init(
        clientID: String,
        cleanSession: Bool = true,
        keepAliveSeconds: UInt16 = 60,
        will: MQTTWill? = nil,
        username: String? = nil,
        password: [UInt8]? = nil,
        protocolLevel: UInt8 = MQTTConnectPacket.protocolLevel311
    ) {
        self.protocolLevel = protocolLevel
        self.clientID = clientID
        self.cleanSession = cleanSession
        self.keepAliveSeconds = keepAliveSeconds
        self.will = will
        self.username = username
        self.password = password
    }
}

/// The last-will message of a CONNECT packet (§3.1.2.5).
package struct MQTTWill: Sendable, Hashable {
    /// The topic name the will is published on; a valid topic name without wildcards.
    package var topic: String
    /// The will message, binary data of at most 65,535 bytes.
    package var payload: [UInt8]
    /// The QoS the will is published with.
    package var qos: MQTTQoS
    /// Whether the will is published as a retained message.
    package var retain: Bool

    /// Creates a will.
    package init(topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
