package import CoatyCore

/// Why a packet cannot be encoded as valid MQTT 3.1.1.
///
/// The encoder refuses to produce packets that a strict peer would reject as malformed.
package enum MQTTEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The remaining length (the argument) exceeds 268,435,455 bytes.
    case packetTooLarge(Int)
    /// A string or binary field of this many bytes exceeds the 65,535-byte limit of a length prefix.
    case fieldTooLong(Int)
    /// A string contains a code point the decoder would reject (U+0000, controls, non-characters).
    case disallowedCodePoint(UInt32)
    /// A topic name or topic filter is invalid.
    case invalidTopic(TopicError)
    /// A packet identifier is 0, missing for QoS 1/2, or present for QoS 0.
    case invalidPacketIdentifier
    /// A QoS 0 PUBLISH has DUP set [MQTT-3.3.1-2].
    case duplicateWithQoS0
    /// A SUBSCRIBE, UNSUBSCRIBE or SUBACK has no entries.
    case emptyPayload(MQTTPacketType)
    /// A password is given without a user name [MQTT-3.1.2-22].
    case passwordWithoutUsername

    /// A human-readable explanation.
    package var description: String {
        switch self {
        case .packetTooLarge(let length): "remaining length \(length) exceeds 268,435,455"
        case .fieldTooLong(let count): "field of \(count) bytes exceeds 65,535"
        case .disallowedCodePoint(let value):
            "string contains disallowed code point U+\(String(value, radix: 16, uppercase: true))"
        case .invalidTopic(let error): error.description
        case .invalidPacketIdentifier: "packet identifier missing, zero, or present for QoS 0"
        case .duplicateWithQoS0: "DUP set on a QoS 0 PUBLISH"
        case .emptyPayload(let type): "\(type) needs at least one entry"
        case .passwordWithoutUsername: "password without user name"
        }
    }
}
