import CoatyMQTT
import CoatyTransport

/// Why a CLI agent could not join, in words: the broker could not be reached; it accepted the
/// connection but did not answer the MQTT handshake; or it refused the connection (CONNACK), with its
/// reason.
enum JoinFailure {
    /// The message for `error`, the transport's failure on its last round of connect attempts.
    ///
    /// With several brokers the transport reports the last one it tried, which is the last named in a
    /// new process's first round.
    static func message(for error: any Error, brokers: [String]) -> String {
        guard brokers.count > 1, let last = brokers.last else {
            return Self.message(for: error, broker: brokers.first ?? "?")
        }
        return "none of the brokers \(brokers.joined(separator: ", ")) could be joined; the last: "
            + Self.message(for: error, broker: last)
    }

    /// The message for one broker's failure.
    static func message(for error: any Error, broker: String) -> String {
        guard let error = error as? TransportError else {
            return "cannot join through the broker at \(broker): \(error)"
        }
        let subject = "the broker at \(broker)"
        if let handshake = error.underlying as? MQTTHandshakeFailure {
            if error.code == .timedOut {
                let within = TransportFactory.connectTimeoutSeconds
                return "\(subject) accepted the connection but did not answer the MQTT handshake within \(within) s"
            }
            guard let cause = handshake.cause else {
                return "\(subject) accepted the connection but closed it without answering the MQTT handshake"
            }
            return "\(subject) accepted the connection, which failed before the MQTT handshake was answered: \(cause)"
        }
        switch error.code {
        case .connectionRefused:
            let prefix = "the broker refused the connection: "
            let reason = error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
            let credentials = ["badUsernameOrPassword", "notAuthorized"].contains { reason.contains($0) }
            return "\(subject) refused the connection: \(reason)"
                + (credentials ? "; check --username and --password (or COATY_USERNAME and COATY_PASSWORD)" : "")
        case .protocolViolation:
            return "\(subject) did not answer as an MQTT 3.1.1 broker: \(error.message)"
        case .timedOut:
            return "cannot reach \(subject): no connection within \(TransportFactory.connectTimeoutSeconds) s"
        case .connectFailed:
            return "cannot reach \(subject): \(error.underlying.map { String(describing: $0) } ?? error.message)"
        default:
            return "cannot join through \(subject): \(error)"
        }
    }
}
