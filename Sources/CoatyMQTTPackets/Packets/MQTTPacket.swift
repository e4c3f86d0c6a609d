/// Any MQTT 3.1.1 control packet, decoded or ready to encode.
///
/// Acknowledgements that carry only a packet identifier are represented by that identifier.
/// Encode with ``encode(into:)`` or ``encoded()``; decode a byte stream with ``MQTTPacketDecoder``.
package enum MQTTPacket: Sendable, Hashable {
    /// CONNECT (§3.1).
    case connect(MQTTConnectPacket)
    /// CONNACK (§3.2).
    case connack(MQTTConnAckPacket)
    /// PUBLISH (§3.3).
    case publish(MQTTPublishPacket)
    /// PUBACK with its packet identifier (§3.4).
    case puback(UInt16)
    /// PUBREC with its packet identifier (§3.5).
    case pubrec(UInt16)
    /// PUBREL with its packet identifier (§3.6).
    case pubrel(UInt16)
    /// PUBCOMP with its packet identifier (§3.7).
    case pubcomp(UInt16)
    /// SUBSCRIBE (§3.8).
    case subscribe(MQTTSubscribePacket)
    /// SUBACK (§3.9).
    case suback(MQTTSubAckPacket)
    /// UNSUBSCRIBE (§3.10).
    case unsubscribe(MQTTUnsubscribePacket)
    /// UNSUBACK with its packet identifier (§3.11).
    case unsuback(UInt16)
    /// PINGREQ (§3.12).
    case pingreq
    /// PINGRESP (§3.13).
    case pingresp
    /// DISCONNECT (§3.14).
    case disconnect

    /// The control packet type.
    package var type: MQTTPacketType {
        switch self {
        case .connect: .connect
        case .connack: .connack
        case .publish: .publish
        case .puback: .puback
        case .pubrec: .pubrec
        case .pubrel: .pubrel
        case .pubcomp: .pubcomp
        case .subscribe: .subscribe
        case .suback: .suback
        case .unsubscribe: .unsubscribe
        case .unsuback: .unsuback
        case .pingreq: .pingreq
        case .pingresp: .pingresp
        case .disconnect: .disconnect
        }
    }
}
