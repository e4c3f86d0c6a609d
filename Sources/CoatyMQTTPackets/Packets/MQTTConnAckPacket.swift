/// A CONNACK packet: the server's answer to CONNECT (§3.2).
package struct MQTTConnAckPacket: Sendable, Hashable {
    /// Whether the server resumed a stored session; always `false` with a non-zero return code.
    package var sessionPresent: Bool
    /// Whether the connection was accepted, and if not, why.
    package var returnCode: MQTTConnectReturnCode

    /// Creates a CONNACK packet.
    package init(sessionPresent: Bool = false, returnCode: MQTTConnectReturnCode = .accepted) {
        self.sessionPresent = sessionPresent
        self.returnCode = returnCode
    }
}

/// The return code of a CONNACK packet (Table 3.1).
package enum MQTTConnectReturnCode: UInt8, Sendable, Hashable, CaseIterable {
    /// 0: connection accepted.
    case accepted = 0
    /// 1: the server does not support the requested protocol level.
    case unacceptableProtocolVersion = 1
    /// 2: the client identifier is well-formed UTF-8 but not allowed by the server.
    case identifierRejected = 2
    /// 3: the MQTT service is unavailable.
    case serverUnavailable = 3
    /// 4: the user name or password is malformed.
    case badUsernameOrPassword = 4
    /// 5: the client is not authorized to connect.
    case notAuthorized = 5
}

extension MQTTConnectReturnCode {
    /// The return code in words, for messages: "bad user name or password".
    package var reason: String {
        switch self {
        case .accepted: "accepted"
        case .unacceptableProtocolVersion: "the broker does not speak MQTT 3.1.1"
        case .identifierRejected: "the client identifier is not allowed"
        case .serverUnavailable: "the MQTT service is unavailable"
        case .badUsernameOrPassword: "bad user name or password"
        case .notAuthorized: "not authorised"
        }
    }
}
