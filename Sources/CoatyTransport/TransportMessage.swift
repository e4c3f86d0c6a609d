public import CoatyCore

/// A message as a transport carries it: a topic name, payload bytes and delivery options.
public struct TransportMessage: Sendable, Hashable {
    /// The MQTT topic name the message is published on.
    public var topic: String
    /// The payload bytes. Coaty events carry UTF-8 JSON; Raw and IO value events carry any bytes.
    public var payload: [UInt8]
    /// The delivery guarantee. Coaty publishes every event with QoS 0.
    public var qos: QualityOfService
    /// Whether a broker keeps the message for future subscribers.
    public var retain: Bool

    /// Creates a message.
    public init(topic: String, payload: [UInt8], qos: QualityOfService = .atMostOnce, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
