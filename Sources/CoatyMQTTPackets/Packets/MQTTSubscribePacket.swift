/// A SUBSCRIBE packet: a client's request to receive messages on one or more topic filters (§3.8).
package struct MQTTSubscribePacket: Sendable, Hashable {
    /// The non-zero packet identifier, echoed in the SUBACK.
    package var packetID: UInt16
    /// The requested subscriptions, at least one, in order.
    package var subscriptions: [MQTTSubscription]

    /// Creates a SUBSCRIBE packet.
    package init(packetID: UInt16, subscriptions: [MQTTSubscription]) {
        self.packetID = packetID
        self.subscriptions = subscriptions
    }
}

/// One topic filter and its requested QoS in a SUBSCRIBE packet.
package struct MQTTSubscription: Sendable, Hashable {
    /// The topic filter; valid per §4.7, wildcards allowed.
    package var filter: String
    /// The maximum QoS the client wants to receive on this filter.
    package var qos: MQTTQoS

    /// Creates a subscription.
    package init(filter: String, qos: MQTTQoS) {
        self.filter = filter
        self.qos = qos
    }
}
