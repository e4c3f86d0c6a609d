import CoatyMQTTPackets
import CoatySockets

extension ClientConnection {
    /// What ``readOrIdle(_:outbox:)`` found.
    enum ParkingRead {
        case bytes([UInt8])
        /// Nothing to read, and the writer task ended: the connection may park.
        case idle(edges: UInt64)
        /// Nothing to read, but the writer is busy: the reader waits on `socket` (the outbox wakes it
        /// once the writer waits again, so that it tries again).
        case writerBusy(TCPConnection, edges: UInt64)
    }

    /// For a connection that may park (connected, over plain TCP, the broker not stopping), one read
    /// that does not wait; when it finds nothing, also ends the writer task (``Outbox/park(wakingReader:)``),
    /// and the reader goes on to ``park(_:since:)``.
    ///
    /// - Returns: `nil` when the connection cannot park.
    @inline(never)
    func readOrIdle(_ state: ReaderState, outbox: Outbox) throws -> ParkingRead? {
        guard state.session != nil, let tcp = state.parkingSocket, let wakeReader = state.wakeReader,
            !self.broker.parked.isStopping
        else { return nil }
        switch try tcp.readWithoutWaiting(maxBytes: Self.readSize) {
        case .bytes(let bytes): return .bytes(bytes)
        case .wouldBlock(let edges):
            return outbox.park(wakingReader: wakeReader) ? .idle(edges: edges) : .writerBusy(tcp, edges: edges)
        }
    }

    /// Parks the connection once its reader found nothing to read and its writer ended: the task
    /// serving it may end, and the reactor's thread handles the client's small reads meanwhile as it
    /// does for a waiting reader (``inlineHandler(_:outbox:watch:)``). Whatever needs a task, the
    /// client's traffic, its outbox or a close, hands the connection to ``ParkedConnections`` to be
    /// served again.
    ///
    /// - Returns: `false` when it could not park: data came since `edges`, something woke the reader
    ///   meanwhile, or the broker is stopping; the task goes on serving.
    @inline(never)
    func park(_ state: ReaderState, since edges: UInt64) -> Bool {
        let parking = self.broker.parked
        guard let tcp = state.parkingSocket, parking.enter(self.id, socket: tcp) else { return false }
        state.decoder.releaseBufferIfEmpty()
        let parked = tcp.park(since: edges, handlingUpTo: Self.inlineReadLimit, reader: state)
        if !parked { parking.leave(self.id) }
        return parked
    }
}

/// A parked connection's reader is its state: the reactor's thread handles its small reads with it,
/// and its wake hands it to ``ParkedConnections``, so parking allocates nothing of the broker's.
extension ClientConnection.ReaderState: ParkedReader {
    func handleParkedRead(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let keepsWaiting = self.connection.handleInline(bytes, self, outbox: self.outbox, watch: self.watch)
        // A parked connection stays idle between reads: it keeps no decoding buffer meanwhile.
        if keepsWaiting { self.decoder.releaseBufferIfEmpty() }
        return keepsWaiting
    }

    func parkEnded(_ wake: Result<DirectReadOutcome, any Error>?) {
        self.connection.broker.parked.wake(ParkedConnections.Woken(state: self, wake: wake))
    }
}
