import Synchronization

/// A TCP reader's work on the reactor's thread, for a task waiting in
/// ``TCPConnection/read(maxBytes:handlingUpTo:after:_:)`` or a reader parked with no task
/// (``TCPConnection/park(since:handlingUpTo:reader:)``), and what that work leaves for the reader.
///
/// One object per wait: the socket's waiter holds it, so a wait allocates nothing else.
final class TCPInlineReads: SocketHandle.InlineReads, @unchecked Sendable {
    /// Who handles the reads, and who goes on when the reactor's thread stops.
    enum Consumer {
        /// A waiting task: the socket resumes it.
        case task(@Sendable (UnsafeRawBufferPointer) -> Bool)
        /// A parked reader, told through ``ParkedReader/parkEnded(_:)``.
        case parked(any ParkedReader)
    }

    private let connection: TCPConnection
    private let consumer: Consumer
    /// The most bytes one read on the reactor's thread takes: one more than `limit` (or the caller's
    /// whole read, if smaller), enough to tell a larger read, which it leaves to the reader, without
    /// a 64 KiB buffer for every small message.
    private let capacity: Int32
    /// The largest read handed to the consumer.
    private let limit: Int32
    /// What the reactor's thread leaves for the reader when it stops handling reads.
    private let outcome = Mutex<Result<DirectReadOutcome, any Error>?>(nil)

    /// - Parameter maxBytes: The most bytes the reader takes in one read, when fewer than `limit` + 1.
    init(connection: TCPConnection, limit: Int, maxBytes: Int = .max, consumer: Consumer) {
        self.connection = connection
        self.consumer = consumer
        self.capacity = Int32(clamping: max(1, min(maxBytes, max(1, limit) + 1)))
        self.limit = Int32(clamping: limit)
    }

    override func handleReads(shortReadDrains: Bool) -> Bool {
        let result = self.connection.readInline(
            capacity: Int(self.capacity),
            limit: Int(self.limit),
            shortReadDrains: shortReadDrains
        ) { bytes in
            switch self.consumer {
            case .task(let consume): consume(bytes)
            case .parked(let reader): reader.handleParkedRead(bytes)
            }
        }
        guard let result else { return true }
        self.outcome.withLock { $0 = result.mapError { $0 } }
        return false
    }

    /// What the reactor's thread left for the reader, once.
    func takeOutcome() -> Result<DirectReadOutcome, any Error>? {
        self.outcome.withLock { $0.take() }
    }

    override func wake(_ error: (any Error)?) {
        guard case .parked(let reader) = self.consumer else { return }
        reader.parkEnded(error.map { .failure($0) } ?? self.takeOutcome())
    }
}
