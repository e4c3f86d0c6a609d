import Synchronization

/// The broker's traffic counters since it was bound: what `$SYS/broker/messages/…` and
/// `$SYS/broker/bytes/…` report. Readers and writers add to them without a lock.
final class BrokerTraffic: Sendable {
    private let messagesReceived = Atomic<Int>(0)
    private let messagesSent = Atomic<Int>(0)
    private let bytesReceived = Atomic<Int>(0)
    private let bytesSent = Atomic<Int>(0)

    /// Counts bytes read from a client.
    func received(bytes count: Int) { self.bytesReceived.add(count, ordering: .relaxed) }

    /// Counts a PUBLISH received from a client.
    func receivedMessage() { self.messagesReceived.add(1, ordering: .relaxed) }

    /// Counts a batch written to a client: its bytes and its PUBLISH packets.
    func sent(bytes count: Int, messages: Int) {
        self.bytesSent.add(count, ordering: .relaxed)
        if messages > 0 { self.messagesSent.add(messages, ordering: .relaxed) }
    }

    /// The counters now.
    var snapshot: SystemTopics.Traffic {
        SystemTopics.Traffic(
            messagesReceived: self.messagesReceived.load(ordering: .relaxed),
            messagesSent: self.messagesSent.load(ordering: .relaxed),
            bytesReceived: self.bytesReceived.load(ordering: .relaxed),
            bytesSent: self.bytesSent.load(ordering: .relaxed)
        )
    }
}
