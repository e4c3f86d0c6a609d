import CoatyCore

/// The retained messages of a broker, one per topic name (MQTT 3.1.1 §3.3.1.3).
///
/// A retained PUBLISH with a payload replaces the stored message of its topic [MQTT-3.3.1-5/7]; one
/// with an empty payload deletes it and is never stored [MQTT-3.3.1-10/11]. Topics are keyed by their
/// UTF-8 bytes. Lookups for a filter without wildcards are direct; filters with wildcards walk a tree
/// of the stored topics' levels (``RetainedTopicTree``), visiting only the branches they can match.
///
/// The store is bounded by ``maximumCount`` topics and ``maximumBytes`` of topics and payloads. A
/// message that would take it beyond either is not stored (it is still delivered live) and is
/// counted; if it would have replaced the message of its topic, that message is deleted too, so that
/// a new subscriber never gets a value older than the last one published.
struct RetainedStore: Sendable {
    private var messages: [[UInt8]: BrokerMessage] = [:]
    private var tree = RetainedTopicTree()

    /// The most topics stored at once.
    var maximumCount: Int

    /// The most bytes of topics and payloads stored at once.
    var maximumBytes: Int

    /// The bytes of topics and payloads stored.
    private(set) var byteCount = 0

    /// How many retained messages were not stored because the store was full.
    private(set) var refusedCount = 0

    /// Creates an empty store.
    init(maximumCount: Int = 100_000, maximumBytes: Int = 64 << 20) {
        self.maximumCount = maximumCount
        self.maximumBytes = maximumBytes
    }

    /// The number of stored messages.
    var count: Int { self.messages.count }

    /// Applies a PUBLISH with RETAIN=1: stores or replaces, or deletes for an empty payload.
    mutating func apply(_ message: BrokerMessage) {
        let replaced = self.messages.removeValue(forKey: message.topic)
        if let replaced { self.byteCount -= replaced.queuedSize }
        let size = message.queuedSize
        guard !message.payload.isEmpty, self.messages.count < self.maximumCount,
            self.byteCount + size <= self.maximumBytes
        else {
            if replaced != nil { self.tree.remove(message.topic) }
            if !message.payload.isEmpty { self.refusedCount += 1 }
            return
        }
        var stored = message
        stored.retain = true
        self.messages[message.topic] = stored
        self.byteCount += size
        if replaced == nil { self.tree.insert(message.topic) }
    }

    /// The retained message stored for exactly `topic`.
    func message(topic: [UInt8]) -> BrokerMessage? { self.messages[topic] }

    /// Every retained message, `$` topics included, in topic byte order (for snapshots).
    var allMessages: [BrokerMessage] {
        self.messages.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.value)
    }

    /// Every retained message whose topic matches `filter`, in topic byte order (for reproducible tests).
    func messages(matching filter: TopicFilter) -> [BrokerMessage] {
        // Most subscriptions find nothing retained (every Coaty request subscribes a response topic).
        guard !self.messages.isEmpty else { return [] }
        if !filter.hasWildcards {
            return self.messages[Array(filter.rawValue.utf8)].map { [$0] } ?? []
        }
        return self.tree.topics(matching: Array(filter.rawValue.utf8))
            .sorted { $0.lexicographicallyPrecedes($1) }
            .compactMap { self.messages[$0] }
    }
}
