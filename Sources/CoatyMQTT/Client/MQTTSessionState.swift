import CoatyMQTTPackets

/// The client's half of a persistent MQTT session (clean session 0), carried from one connection to
/// the next (MQTT 3.1.1 §4.1): the QoS 1 and 2 messages sent but not completely acknowledged, and the
/// QoS 2 messages received whose PUBREL has not come.
///
/// On the next connection of the session, if the broker says it kept its half (CONNACK session
/// present), the client sends the unacknowledged PUBLISHes again with DUP set and their original
/// packet identifiers, and the PUBRELs of QoS 2 messages awaiting PUBCOMP, in the order they were
/// first sent [MQTT-4.4.0-1] [MQTT-4.6.0-1]. The received QoS 2 identifiers keep a message that the
/// broker sends again, because our PUBREC never reached it, from being delivered twice
/// [MQTT-4.3.3-2].
struct MQTTSessionState: Sendable, Equatable {
    /// An outbound exchange that is part of the session.
    enum Exchange: Sendable, Equatable {
        /// A QoS 1 or 2 PUBLISH, with its identifier, awaiting PUBACK or PUBREC.
        case publish(MQTTPublishPacket)
        /// A QoS 2 message whose PUBREL went out, awaiting PUBCOMP; its payload is no longer needed.
        case release(UInt16)

        var packetID: UInt16 {
            switch self {
            case .publish(let packet): packet.packetID ?? 0
            case .release(let id): id
            }
        }
    }

    /// The unacknowledged outbound exchanges, in the order in which they were first sent.
    var outbound: [Exchange] = []
    /// Identifiers of QoS 2 messages received and delivered, awaiting PUBREL.
    var receivedQoS2: Set<UInt16> = []

    var isEmpty: Bool { self.outbound.isEmpty && self.receivedQoS2.isEmpty }
}
