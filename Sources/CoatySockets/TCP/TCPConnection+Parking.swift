import Synchronization

/// The owner of a reader parked with no task (``TCPConnection/park(since:handlingUpTo:reader:)``):
/// one object that handles the small reads on the reactor's thread and is told once when the park
/// ends, so that a parked connection costs this object and one of the socket's, not closures.
package protocol ParkedReader: AnyObject, Sendable {
    /// On the reactor's thread: handles one read of at most the park's limit; returns `false` when the
    /// reader must go on in a task (the park then ends with `.handled`).
    func handleParkedRead(_ bytes: [UInt8]) -> Bool

    /// The park ended, from whichever thread ended it: with what the reactor's thread leaves for the
    /// reader (a larger read, the end of the stream, or `.handled`), `nil` when the reader should just
    /// read (readable, or ``TCPConnection/wakeReader()``), or the error that ended the wait (closed).
    /// Called once, never while ``handleParkedRead(_:)`` runs.
    func parkEnded(_ wake: Result<DirectReadOutcome, any Error>?)
}

extension TCPConnection {
    /// Waits for data with no task: as ``read(maxBytes:handlingUpTo:_:)`` waits, the reactor's thread
    /// passes each read of at most `limit` bytes to `reader`, but where that call would resume its
    /// task, the reader's ``ParkedReader/parkEnded(_:)`` is called once instead.
    ///
    /// - Parameter edges: From the ``readWithoutWaiting(maxBytes:)`` that found nothing.
    /// - Returns: `false`, without waiting, when data came since, a wake is pending, the connection is
    ///   closed, or a reader already waits.
    package func park(since edges: UInt64, handlingUpTo limit: Int, reader: any ParkedReader) -> Bool {
        self.handle.park(since: edges, reads: ParkedReads(connection: self, limit: limit, reader: reader))
    }

    /// Parks like ``park(since:handlingUpTo:reader:)``, with closures for the reader: `consume` for
    /// its reads, `onWake` for the end of the park.
    package func park(
        since edges: UInt64,
        handlingUpTo limit: Int,
        _ consume: @escaping @Sendable ([UInt8]) -> Bool,
        onWake: @escaping @Sendable (Result<DirectReadOutcome, any Error>?) -> Void
    ) -> Bool {
        self.park(since: edges, handlingUpTo: limit, reader: ClosureParkedReader(consume: consume, onWake: onWake))
    }
}

/// A parked reader's work on the reactor's thread, and what that work leaves for the reader.
private final class ParkedReads: SocketHandle.InlineReads, @unchecked Sendable {
    let connection: TCPConnection
    let limit: Int
    let reader: any ParkedReader
    /// What the reactor's thread leaves for the reader when it stops handling reads; with `any Error`,
    /// a word, rather than the 48 bytes of a ``SocketError`` in every parked connection.
    private let outcome = Mutex<Result<DirectReadOutcome, any Error>?>(nil)

    init(connection: TCPConnection, limit: Int, reader: any ParkedReader) {
        self.connection = connection
        self.limit = limit
        self.reader = reader
    }

    override func handleReads() -> Bool {
        // One byte more than it handles, enough to tell a larger read (see `read(maxBytes:handlingUpTo:_:)`).
        let reader = self.reader
        let result = self.connection.readInline(capacity: max(1, self.limit) + 1, limit: self.limit) {
            reader.handleParkedRead($0)
        }
        guard let result else { return true }
        self.outcome.withLock { $0 = result.mapError { $0 } }
        return false
    }

    override func wake(_ error: (any Error)?) {
        if let error {
            self.reader.parkEnded(.failure(error))
        } else {
            self.reader.parkEnded(self.outcome.withLock { $0.take() })
        }
    }
}

/// A ``ParkedReader`` made of closures.
private final class ClosureParkedReader: ParkedReader {
    let consume: @Sendable ([UInt8]) -> Bool
    let onWake: @Sendable (Result<DirectReadOutcome, any Error>?) -> Void

    init(
        consume: @escaping @Sendable ([UInt8]) -> Bool,
        onWake: @escaping @Sendable (Result<DirectReadOutcome, any Error>?) -> Void
    ) {
        self.consume = consume
        self.onWake = onWake
    }

    func handleParkedRead(_ bytes: [UInt8]) -> Bool { self.consume(bytes) }

    func parkEnded(_ wake: Result<DirectReadOutcome, any Error>?) { self.onWake(wake) }
}
