import Synchronization

/// The owner of a reader parked with no task (``TCPConnection/park(since:handlingUpTo:reader:)``):
/// one object that handles the small reads on the reactor's thread and is told once when the park
/// ends, so that a parked connection costs this object and one of the socket's, not closures.
package protocol ParkedReader: AnyObject, Sendable {
    /// On the reactor's thread: handles one read of at most the park's limit, which it must not keep
    /// (see `readInline`); returns `false` when the reader must go on in a task (the park then ends
    /// with `.handled`).
    func handleParkedRead(_ bytes: UnsafeRawBufferPointer) -> Bool

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
        let reads = TCPInlineReads(connection: self, limit: limit, consumer: .parked(reader))
        return self.handle.park(since: edges, reads: reads)
    }
}
