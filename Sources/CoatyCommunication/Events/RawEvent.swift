import CoatyCore

/// Raw: bytes on any topic that is not a Coaty topic, for talking to non-Coaty MQTT clients.
public struct RawEvent: Sendable, Hashable {
    /// The topic name (published) or the topic the message arrived on (received).
    public let topic: String
    /// The payload bytes.
    public let payload: [UInt8]
    /// Whether a broker should retain the message (published events only).
    public let retain: Bool

    /// Creates a Raw event to publish.
    ///
    /// - Parameters:
    ///   - topic: A valid MQTT topic name that does not start with `coaty/`.
    ///   - payload: The bytes.
    ///   - retain: Whether the broker retains the message. Defaults to `false`.
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidTopic`` if the topic
    ///   is not a valid topic name or starts with `coaty/`.
    public init(topic: String, payload: [UInt8], retain: Bool = false) throws {
        do {
            try TopicName.validate(topic)
        } catch {
            throw CommunicationError(.invalidTopic, error.description, underlying: error)
        }
        guard !CoatyTopic.isCoatyTopic(topic) else {
            throw CommunicationError(.invalidTopic, "a Raw topic must not start with 'coaty/': '\(topic)'")
        }
        self.topic = topic
        self.payload = payload
        self.retain = retain
    }

    /// Creates a Raw event with a UTF-8 string payload.
    public init(topic: String, string: String, retain: Bool = false) throws {
        try self.init(topic: topic, payload: Array(string.utf8), retain: retain)
    }

    init(received topic: String, payload: [UInt8]) {
        self.topic = topic
        self.payload = payload
        self.retain = false
    }

    /// The payload decoded as UTF-8, if it is valid UTF-8.
    public var string: String? { String(validating: self.payload, as: UTF8.self) }
}
