import CoatyCore

/// A session's QoS 1/2 messages waiting for a free in-flight slot or for the client to come back,
/// bounded by a number of messages and by the bytes they hold (topic and payload).
///
/// Full by either bound, it drops its oldest messages to make room for the new one. A message larger
/// than the byte bound on its own is still queued, alone, so a client can always make progress; the
/// packet size limit bounds it.
struct MessageQueue: Sendable {
    private var messages: BoundedQueue<BrokerMessage>
    /// The most bytes of topics and payloads held at once (except for one message larger than that).
    let byteCapacity: Int
    /// The bytes of topics and payloads held.
    private(set) var byteCount = 0

    init(capacity: Int, byteCapacity: Int) {
        self.messages = BoundedQueue(capacity: capacity)
        self.byteCapacity = max(1, byteCapacity)
    }

    /// The number of queued messages.
    var count: Int { self.messages.count }

    /// Whether no message is queued.
    var isEmpty: Bool { self.messages.isEmpty }

    /// The queued messages, oldest first.
    var elements: ArraySlice<BrokerMessage> { self.messages.elements }

    /// Whether the queue is at least a quarter full, by messages or by bytes: its publishers should
    /// wait for the client (see ``ClientConnection``'s flow control).
    var isFilling: Bool {
        self.messages.count * 4 >= self.messages.capacity || self.byteCount * 4 >= self.byteCapacity
    }

    /// Appends a message, first dropping the oldest ones that would leave no room for it; returns how
    /// many were dropped.
    mutating func append(_ message: BrokerMessage) -> Int {
        let size = message.queuedSize
        var dropped = 0
        while !self.messages.isEmpty,
            self.messages.count >= self.messages.capacity || self.byteCount + size > self.byteCapacity
        {
            _ = self.popFirst()
            dropped += 1
        }
        _ = self.messages.append(message)  // there is room now: it drops nothing
        self.byteCount += size
        return dropped
    }

    /// Removes and returns the oldest message.
    mutating func popFirst() -> BrokerMessage? {
        guard let message = self.messages.popFirst() else { return nil }
        self.byteCount -= message.queuedSize
        return message
    }
}

extension BrokerMessage {
    /// The bytes a queued copy holds, as the queue bounds count them: the topic and the payload.
    var queuedSize: Int { self.topic.count + self.payload.count }
}
