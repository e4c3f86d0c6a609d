package import CoatyCore

/// Why bytes received from the network are not a valid MQTT 3.1.1 packet.
///
/// Every case is a protocol violation after which the connection must be closed [MQTT-4.8.0-1]. A
/// broker closes without a reply for all cases except ``unsupportedProtocolLevel(_:)``, which it
/// answers with CONNACK return code 1 before closing [MQTT-3.1.2-2]. A ``MQTTPacketDecoder`` that has
/// thrown keeps throwing the same error: the stream cannot be resynchronised.
package enum MQTTDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The remaining-length field has a continuation bit set in its fourth byte (§2.2.3).
    case malformedRemainingLength
    /// The packet, fixed header included, has this many bytes, more than the decoder's maximum.
    case packetTooLarge(Int)
    /// The packet type nibble (the argument) is 0 or 15, which are reserved.
    case invalidPacketType(UInt8)
    /// The fixed-header flag bits are not those required for the packet type, or a PUBLISH has
    /// DUP set with QoS 0 [MQTT-2.2.2-2], [MQTT-3.3.1-2].
    case invalidFlags
    /// A QoS field holds this invalid value: 3 in PUBLISH or a will, or a SUBSCRIBE QoS byte above 2
    /// or with reserved bits set [MQTT-3.3.1-4], [MQTT-3.8.3-4].
    case invalidQoS(UInt8)
    /// The remaining length (the argument) is wrong for a packet type with a fixed size, for example
    /// a PINGREQ with a body.
    case invalidRemainingLength(MQTTPacketType, Int)
    /// The packet ended before all of its fields were read (its declared length is too short).
    case truncatedPacket(MQTTPacketType)
    /// The input ends before the packet's declared length; only thrown by
    /// ``MQTTPacket/init(decoding:)``, as the streaming decoder waits for more bytes instead.
    case incompletePacket
    /// The packet has this many bytes left after its last field (its declared length is too long).
    case unexpectedTrailingBytes(MQTTPacketType, Int)
    /// A string is not well-formed UTF-8 (including encoded surrogates and overlong forms)
    /// [MQTT-1.5.3-1].
    case invalidUTF8
    /// A string contains this disallowed code point: U+0000, a control character (U+0001–U+001F,
    /// U+007F–U+009F) or a non-character (U+FDD0–U+FDEF, U+xxFFFE, U+xxFFFF) [MQTT-1.5.3-2].
    case disallowedCodePoint(UInt32)
    /// A topic name or topic filter is invalid (empty, or wildcards misplaced or in a topic name).
    case invalidTopic(TopicError)
    /// A packet that needs a packet identifier carries 0 [MQTT-2.3.1-1].
    case zeroPacketIdentifier
    /// A CONNECT's protocol name (the argument, lossily decoded) is not `"MQTT"`; close without CONNACK.
    case invalidProtocolName(String)
    /// A CONNECT with protocol name `"MQTT"` has this protocol level instead of 4; answer CONNACK
    /// return code 1 (``MQTTConnectReturnCode/unacceptableProtocolVersion``), then close.
    case unsupportedProtocolLevel(UInt8)
    /// A CONNECT's flags byte (the argument) is inconsistent: reserved bit set, will QoS or retain
    /// without the will flag, or password without user name [MQTT-3.1.2-3/11/13/15/22].
    case invalidConnectFlags(UInt8)
    /// A CONNACK's acknowledge-flags byte (the argument) has reserved bits set [MQTT-3.2.2-1].
    case invalidConnAckFlags(UInt8)
    /// A CONNACK or SUBACK return code (the argument) is not defined.
    case invalidReturnCode(UInt8)
    /// A SUBSCRIBE, UNSUBSCRIBE or SUBACK has no entries in its payload [MQTT-3.8.3-3], [MQTT-3.10.3-2].
    case emptyPayload(MQTTPacketType)

    /// A human-readable explanation.
    package var description: String {
        switch self {
        case .malformedRemainingLength:
            "malformed remaining length: more than 4 bytes"
        case .packetTooLarge(let size):
            "packet of \(size) bytes exceeds the maximum packet size"
        case .invalidPacketType(let type):
            "invalid packet type \(type)"
        case .invalidFlags:
            "invalid fixed-header flags"
        case .invalidQoS(let value):
            "invalid QoS \(value)"
        case .invalidRemainingLength(let type, let length):
            "invalid remaining length \(length) for \(type)"
        case .truncatedPacket(let type):
            "\(type) ends before its last field"
        case .incompletePacket:
            "input ends before the end of the packet"
        case .unexpectedTrailingBytes(let type, let count):
            "\(type) has \(count) unexpected trailing bytes"
        case .invalidUTF8:
            "string is not well-formed UTF-8"
        case .disallowedCodePoint(let value):
            "string contains disallowed code point U+\(Self.hex(value))"
        case .invalidTopic(let error):
            error.description
        case .zeroPacketIdentifier:
            "packet identifier 0"
        case .invalidProtocolName(let name):
            "invalid protocol name '\(name)'"
        case .unsupportedProtocolLevel(let level):
            "unsupported protocol level \(level)"
        case .invalidConnectFlags(let flags):
            "invalid CONNECT flags 0x\(Self.hex(UInt32(flags)))"
        case .invalidConnAckFlags(let flags):
            "invalid CONNACK flags 0x\(Self.hex(UInt32(flags)))"
        case .invalidReturnCode(let code):
            "invalid return code 0x\(Self.hex(UInt32(code)))"
        case .emptyPayload(let type):
            "\(type) has no entries"
        }
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return digits.count < 4 ? String(repeating: "0", count: 4 - digits.count) + digits : digits
    }
}
