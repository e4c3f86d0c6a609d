import CoatyCore

/// The retained messages of a broker, one per topic name (MQTT 3.1.1 §3.3.1.3).
///
/// A retained PUBLISH with a payload replaces the stored message of its topic [MQTT-3.3.1-5/7]; one
/// with an empty payload deletes it and is never stored [MQTT-3.3.1-10/11]. Topics are keyed by their
/// UTF-8 bytes. Lookups for a filter without wildcards are direct; filters with wildcards scan the
/// store, which is fine for the development-sized deployments this broker targets. The store is
/// bounded by ``maximumCount``: storing a new topic beyond it is refused (the message is still
/// delivered live) and counted.
struct RetainedStore: Sendable {
    private var messages: [[UInt8]: BrokerMessage] = [:]

    /// The most topics stored at once.
    var maximumCount: Int

    /// How many retained messages were not stored because the store was full.
    private(set) var refusedCount = 0

    /// Creates an empty store.
    init(maximumCount: Int = 100_000) {
        self.maximumCount = maximumCount
    }

    /// The number of stored messages.
    var count: Int { self.messages.count }

    /// Applies a PUBLISH with RETAIN=1: stores or replaces, or deletes for an empty payload.
    mutating func apply(_ message: BrokerMessage) {
        if message.payload.isEmpty {
            self.messages.removeValue(forKey: message.topic)
            return
        }
        if self.messages[message.topic] == nil, self.messages.count >= self.maximumCount {
            self.refusedCount += 1
            return
        }
        var stored = message
        stored.retain = true
        self.messages[message.topic] = stored
    }

    /// The retained message stored for exactly `topic`.
    func message(topic: [UInt8]) -> BrokerMessage? { self.messages[topic] }

    /// Every retained message whose topic matches `filter`, in topic byte order (for reproducible tests).
    func messages(matching filter: TopicFilter) -> [BrokerMessage] {
        if !filter.hasWildcards {
            return self.messages[Array(filter.rawValue.utf8)].map { [$0] } ?? []
        }
        return self.messages
            .filter { filter.matches(bytes: $0.key) }
            .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            .map(\.value)
    }
}
