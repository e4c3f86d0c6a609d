/// Validation of MQTT topic names, the topics that messages are published on (MQTT 3.1.1 §4.7).
public enum TopicName {
    /// Checks that `topic` may be published on.
    ///
    /// - Throws: ``TopicError`` if the topic is empty, longer than 65,535 UTF-8 bytes, or contains
    ///   U+0000, `+` or `#`.
    public static func validate(_ topic: String) throws(TopicError) {
        // One pass over the bytes: every message a transport publishes comes through here.
        var topic = topic
        let (hasNUL, hasWildcard) = topic.withUTF8 { bytes in
            var hasNUL = false
            var hasWildcard = false
            for byte in bytes {
                hasNUL = hasNUL || byte == 0
                hasWildcard = hasWildcard || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "#")
            }
            return (hasNUL, hasWildcard)
        }
        try TopicRules.checkLength(topic)
        if hasNUL { throw TopicError(topic: topic, reason: "a topic must not contain U+0000") }
        if hasWildcard { throw TopicError(topic: topic, reason: "a topic name must not contain '+' or '#'") }
    }

    /// Whether `topic` may be published on.
    public static func isValid(_ topic: String) -> Bool {
        (try? self.validate(topic)) != nil
    }
}

/// Rules shared by topic names and filters.
enum TopicRules {
    static let maximumLength = 65_535

    static func checkCommon(_ topic: String) throws(TopicError) {
        try self.checkLength(topic)
        if topic.utf8.contains(0) { throw TopicError(topic: topic, reason: "a topic must not contain U+0000") }
    }

    static func checkLength(_ topic: String) throws(TopicError) {
        let count = topic.utf8.count
        if count == 0 { throw TopicError(topic: topic, reason: "a topic must not be empty") }
        if count > maximumLength {
            throw TopicError(topic: topic, reason: "a topic must not exceed \(maximumLength) UTF-8 bytes")
        }
    }
}
