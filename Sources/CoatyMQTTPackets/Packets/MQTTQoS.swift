package import CoatyCore

/// The MQTT quality of service level carried in PUBLISH, SUBSCRIBE and CONNECT (will) packets.
///
/// The same values as CoatyCore's `QualityOfService`; convert with ``init(_:)`` and
/// ``qualityOfService``.
package enum MQTTQoS: UInt8, Sendable, Hashable, Comparable, CaseIterable {
    /// QoS 0: at most once.
    case atMostOnce = 0
    /// QoS 1: at least once, acknowledged by PUBACK.
    case atLeastOnce = 1
    /// QoS 2: exactly once, through PUBREC, PUBREL and PUBCOMP.
    case exactlyOnce = 2

    /// Orders by level, so `min(published, granted)` gives the delivered QoS.
    package static func < (lhs: MQTTQoS, rhs: MQTTQoS) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Converts CoatyCore's quality of service.
    package init(_ qos: QualityOfService) {
        switch qos {
        case .atMostOnce: self = .atMostOnce
        case .atLeastOnce: self = .atLeastOnce
        case .exactlyOnce: self = .exactlyOnce
        }
    }

    /// This level as CoatyCore's quality of service.
    package var qualityOfService: QualityOfService {
        switch self {
        case .atMostOnce: .atMostOnce
        case .atLeastOnce: .atLeastOnce
        case .exactlyOnce: .exactlyOnce
        }
    }
}
