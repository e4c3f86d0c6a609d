import CoatySockets

extension ClientConnection {
    /// For a connection that may park (connected, over plain TCP, the broker not stopping), one read
    /// that does not wait; when it finds nothing, also ends the writer task (``Outbox/park(wakingReader:)``),
    /// and the reader goes on to ``park(_:outbox:watch:since:)``.
    ///
    /// - Returns: `nil` when the connection cannot park now, also when its writer is busy: the outbox
    ///   then wakes the reader's wait once the writer waits again, so it tries again.
    @inline(never)
    func readOrIdle(_ state: ReaderState, outbox: Outbox) throws -> TCPConnection.ImmediateRead? {
        guard state.session != nil, let tcp = state.parkingSocket, let wakeReader = state.wakeReader,
            !self.broker.parked.isStopping
        else { return nil }
        let read = try tcp.readWithoutWaiting(maxBytes: Self.readSize)
        if case .wouldBlock = read, !outbox.park(wakingReader: wakeReader) { return nil }
        return read
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
    func park(_ state: ReaderState, outbox: Outbox, watch: ActivityWatch, since edges: UInt64) -> Bool {
        let parking = self.broker.parked
        guard let tcp = state.parkingSocket, let (_, handler) = self.inlineHandler(state, outbox: outbox, watch: watch),
            parking.enter(self.id, socket: tcp)
        else { return false }
        let parked = tcp.park(since: edges, handlingUpTo: Self.inlineReadLimit, handler) { wake in
            parking.wake(
                ParkedConnections.Woken(connection: self, state: state, outbox: outbox, watch: watch, wake: wake)
            )
        }
        if !parked { parking.leave(self.id) }
        return parked
    }
}
