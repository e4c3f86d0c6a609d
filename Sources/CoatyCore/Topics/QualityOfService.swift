/// The MQTT delivery guarantee of a message.
public enum QualityOfService: UInt8, Sendable, Hashable, Comparable, CaseIterable {
    /// QoS 0: at most once, fire and forget. Coaty uses this for every event.
    case atMostOnce = 0
    /// QoS 1: at least once, acknowledged by PUBACK.
    case atLeastOnce = 1
    /// QoS 2: exactly once, through PUBREC, PUBREL and PUBCOMP.
    case exactlyOnce = 2

    public static func < (lhs: QualityOfService, rhs: QualityOfService) -> Bool { lhs.rawValue < rhs.rawValue }
}
