import Synchronization

extension MQTTBroker {
    /// What the broker holds for open connections, for tests that check that closed connections leave
    /// nothing behind.
    package struct ConnectionResources: Sendable {
        /// Write queues of attached connections.
        package var outboxes: Int
        /// Keep-alive and connect-timeout deadlines the sweeper checks.
        package var watches: Int
        /// Bytes of unfinished packets held by all readers.
        package var unfinishedPacketBytes: Int
    }

    /// A snapshot of ``ConnectionResources``.
    package var connectionResources: ConnectionResources {
        ConnectionResources(
            outboxes: self.core.withLock { $0.outboxes.count },
            watches: self.watches.withLock { $0.count },
            unfinishedPacketBytes: self.unfinishedPacketBytes.load(ordering: .relaxed)
        )
    }

    /// The write queues of the attached connections, for tests that check they are freed.
    package var attachedOutboxes: [AnyObject] {
        self.core.withLock { Array($0.outboxes.values) }
    }
}
