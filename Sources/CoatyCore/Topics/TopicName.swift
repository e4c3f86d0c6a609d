/// Validation of MQTT topic names, the topics that messages are published on (MQTT 3.1.1 §4.7).
public enum TopicName {
    /// Checks that `topic` may be published on.
    ///
    /// - Throws: ``TopicError`` if the topic is empty, longer than 65,535 UTF-8 bytes, or contains
    ///   U+0000, `+` or `#`.
    public static func validate(_ topic: String) throws(TopicError) {
        // One pass over the bytes: every message a transport publishes comes through here.
        var topic = topic
        // Counting with `&+` leaves no early exit and no branch in the loop, so the compiler vectorises
        // it; only a topic that fails is scanned again, to say why.
        let forbidden = topic.withUTF8 { bytes in
            var count = 0
            for byte in bytes {
                let isNUL = byte == 0 ? 1 : 0
                let isWildcard = byte == UInt8(ascii: "+") || byte == UInt8(ascii: "#") ? 1 : 0
                count &+= isNUL | isWildcard
            }
            return count
        }
        try TopicRules.checkLength(topic)
        guard forbidden > 0 else { return }
        if topic.utf8.contains(0) { throw TopicRules.containsNUL(topic) }
        throw TopicError(topic: topic, reason: "a topic name must not contain '+' or '#'")
    }

    /// Whether `topic` may be published on.
    public static func isValid(_ topic: String) -> Bool {
        (try? self.validate(topic)) != nil
    }
}

/// Rules shared by topic names and filters.
enum TopicRules {
    static let maximumLength = 65_535

    /// The error for a topic name or filter with U+0000 in it.
    static func containsNUL(_ topic: String) -> TopicError {
        TopicError(topic: topic, reason: "a topic must not contain U+0000")
    }

    static func checkLength(_ topic: String) throws(TopicError) {
        let count = topic.utf8.count
        if count == 0 { throw TopicError(topic: topic, reason: "a topic must not be empty") }
        if count > maximumLength {
            throw TopicError(topic: topic, reason: "a topic must not exceed \(maximumLength) UTF-8 bytes")
        }
    }
}
