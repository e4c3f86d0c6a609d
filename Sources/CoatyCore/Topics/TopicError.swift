/// Why a string is not a valid MQTT topic name or topic filter (MQTT 3.1.1 §4.7).
public struct TopicError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rejected topic or filter.
    public var topic: String
    /// A human-readable reason, for example `"'#' must be the last level"`.
    public var reason: String

    /// Creates an error.
    public init(topic: String, reason: String) {
        self.topic = topic
        self.reason = reason
    }

    public var description: String { "invalid topic '\(self.topic)': \(self.reason)" }
}
