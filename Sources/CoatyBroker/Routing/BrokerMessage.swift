import CoatyCore

/// An application message as the broker routes and stores it, independent of any packet.
struct BrokerMessage: Sendable, Equatable {
    /// The topic name as UTF-8 bytes; routing compares these, never `String`s.
    var topic: [UInt8]
    /// The payload, shared copy-on-write between every subscriber's queue.
    var payload: [UInt8]
    /// The QoS the publisher used.
    var qos: QualityOfService
    /// The RETAIN flag as stored or delivered.
    var retain: Bool

    init(topic: [UInt8], payload: [UInt8], qos: QualityOfService, retain: Bool) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    init(topic: String, payload: [UInt8], qos: QualityOfService, retain: Bool = false) {
        self.init(topic: Array(topic.utf8), payload: payload, qos: qos, retain: retain)
    }

    /// The topic as a string, for logs and for the codec.
    var topicString: String { String(decoding: self.topic, as: UTF8.self) }
}
