/// A PUBLISH packet: an application message, in either direction (§3.3).
package struct MQTTPublishPacket: Sendable, Hashable {
    /// The topic name; never empty and without wildcards.
    package var topic: String
    /// The application message, arbitrary bytes (possibly empty).
    package var payload: [UInt8]
    /// The delivery guarantee.
    package var qos: MQTTQoS
    /// Whether the message is (to be) retained by the server.
    package var retain: Bool
    /// Whether this is a redelivery of an earlier attempt; always `false` for QoS 0 [MQTT-3.3.1-2].
    package var dup: Bool
    /// The packet identifier: non-zero for QoS 1 and 2, `nil` for QoS 0 [MQTT-2.3.1-5].
    package var packetID: UInt16?

    /// Creates a PUBLISH packet.
    package init(
        topic: String,
        payload: [UInt8],
        qos: MQTTQoS = .atMostOnce,
        retain: Bool = false,
        dup: Bool = false,
        packetID: UInt16? = nil
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.dup = dup
        self.packetID = packetID
    }
}
