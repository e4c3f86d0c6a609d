/// The control packet type in the high nibble of an MQTT 3.1.1 fixed header (§2.2.1).
///
/// Types 0 and 15 are reserved and never decoded.
package enum MQTTPacketType: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Client request to connect to a server.
    case connect = 1
    /// Connect acknowledgement.
    case connack = 2
    /// Publish message.
    case publish = 3
    /// Publish acknowledgement (QoS 1).
    case puback = 4
    /// Publish received (QoS 2, part 1).
    case pubrec = 5
    /// Publish release (QoS 2, part 2).
    case pubrel = 6
    /// Publish complete (QoS 2, part 3).
    case pubcomp = 7
    /// Subscribe request.
    case subscribe = 8
    /// Subscribe acknowledgement.
    case suback = 9
    /// Unsubscribe request.
    case unsubscribe = 10
    /// Unsubscribe acknowledgement.
    case unsuback = 11
    /// Ping request.
    case pingreq = 12
    /// Ping response.
    case pingresp = 13
    /// Client is disconnecting.
    case disconnect = 14

    /// The flag bits (low nibble) that every packet of this type must carry, or `nil` for PUBLISH,
    /// whose flags carry DUP, QoS and RETAIN (Table 2.2, [MQTT-2.2.2-1]).
    package var requiredFlags: UInt8? {
        switch self {
        case .publish: nil
        case .pubrel, .subscribe, .unsubscribe: 0b0010
        default: 0
        }
    }

    /// The exact remaining length every packet of this type has, or `nil` if it varies.
    package var fixedRemainingLength: Int? {
        switch self {
        case .connack, .puback, .pubrec, .pubrel, .pubcomp, .unsuback: 2
        case .pingreq, .pingresp, .disconnect: 0
        case .connect, .publish, .subscribe, .suback, .unsubscribe: nil
        }
    }

    /// The upper-case name used in the standard, for example `"PUBREL"`.
    package var description: String {
        switch self {
        case .connect: "CONNECT"
        case .connack: "CONNACK"
        case .publish: "PUBLISH"
        case .puback: "PUBACK"
        case .pubrec: "PUBREC"
        case .pubrel: "PUBREL"
        case .pubcomp: "PUBCOMP"
        case .subscribe: "SUBSCRIBE"
        case .suback: "SUBACK"
        case .unsubscribe: "UNSUBSCRIBE"
        case .unsuback: "UNSUBACK"
        case .pingreq: "PINGREQ"
        case .pingresp: "PINGRESP"
        case .disconnect: "DISCONNECT"
        }
    }
}
