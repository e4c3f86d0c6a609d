import Synchronization

/// A handler that keeps entries in memory, for tests and diagnostics.
///
/// Copies share the same storage, so a test can keep one copy and hand another to a logger.
/// At most `capacity` entries are kept; older ones are dropped first.
public struct InMemoryLogHandler: CoatyLogHandler {
    private final class Storage: Sendable {
        let entries = Mutex<[CoatyLogEntry]>([])
    }

    private let storage = Storage()
    private let capacity: Int

    /// Creates an empty handler keeping at most `capacity` entries.
    public init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    public func log(_ entry: CoatyLogEntry) {
        self.storage.entries.withLock { entries in
            if entries.count >= self.capacity { entries.removeFirst(entries.count - self.capacity + 1) }
            entries.append(entry)
        }
    }

    /// The entries logged so far, oldest first.
    public var entries: [CoatyLogEntry] {
        self.storage.entries.withLock { $0 }
    }
}
