import CoatyCore

/// The `$SYS/broker/…` statistics topics, as mosquitto names them: a pure value that takes a sample of
/// the broker's counters and returns the topics whose value changed since the last sample, to be
/// published retained.
///
/// Only changed values are published, as mosquitto does, so a quiet broker sends nothing but its
/// uptime.
struct SystemTopics: Sendable {
    /// The traffic counters of one sample.
    struct Traffic: Sendable, Equatable {
        var messagesReceived: Int
        var messagesSent: Int
        var bytesReceived: Int
        var bytesSent: Int
    }

    /// The payloads last published, by topic.
    private var published: [String: String] = [:]

    /// The topics and payloads of one sample whose value changed since the last.
    ///
    /// - Parameters:
    ///   - traffic: The traffic counters.
    ///   - connectedClients: Clients connected now.
    ///   - uptime: Time since the broker started serving.
    mutating func changes(traffic: Traffic, connectedClients: Int, uptime: Duration) -> [(
        topic: String, payload: String
    )] {
        let values: [(String, String)] = [
            ("$SYS/broker/version", "coaty broker \(CoatyVersion.string)"),
            ("$SYS/broker/uptime", "\(uptime.components.seconds) seconds"),
            ("$SYS/broker/clients/connected", "\(connectedClients)"),
            ("$SYS/broker/messages/received", "\(traffic.messagesReceived)"),
            ("$SYS/broker/messages/sent", "\(traffic.messagesSent)"),
            ("$SYS/broker/bytes/received", "\(traffic.bytesReceived)"),
            ("$SYS/broker/bytes/sent", "\(traffic.bytesSent)"),
        ]
        var changes: [(topic: String, payload: String)] = []
        for (topic, payload) in values where self.published[topic] != payload {
            self.published[topic] = payload
            changes.append((topic, payload))
        }
        return changes
    }
}
