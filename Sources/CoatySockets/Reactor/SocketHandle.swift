import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One registered non-blocking descriptor: its readiness counters, the tasks waiting on it, and the
/// close protocol.
///
/// All state sits behind one `Mutex`. An operation brackets each system call with
/// ``beginCall(_:)`` / ``endCall()``, so ``close()`` never closes the descriptor while another task is
/// inside a call on it (the number could otherwise be reused by a new socket under that call); the
/// last call to end performs the deferred close.
///
/// Each direction has at most one waiter, held in the same state as the readiness counters, so a
/// report and the wake-up it causes are decided under one lock; a `WaiterRegistry` would add a
/// second lock and a table entry to every wait on the hottest path of the package.
final class SocketHandle: Sendable {
    /// The direction an operation waits for.
    enum Direction {
        case read
        case write
    }

    /// The outcome of one non-blocking system call.
    enum CallResult<Value> {
        case done(Value)
        case wouldBlock
        case failed(Int32)
    }

    private struct Waiter {
        var id: UInt64
        /// The waiting task; `nil` for a parked reader (see ``park(since:reads:)``), whose
        /// ``InlineReads/wake(_:)`` stands in for it.
        ///
        /// Unsafe, not checked: the handle takes a waiter out of its slot under the lock before it
        /// resumes it, so each is resumed exactly once; and a checked continuation is a type of unknown
        /// layout, which puts runtime value-witness calls on every copy of the handle's state.
        var continuation: UnsafeContinuation<Void, any Error>?
        /// For a read waiter that handles reads on the reactor's thread (see ``wait(_:since:call:reads:)``).
        var inline: InlineReads?

        /// ``resume(throwing:)``, letting go of the inline work first when a task waits: the task may
        /// end the connection at once, and then nothing of it (a broker's reader state and outbox) may
        /// stay held by the thread that resumed it. A parked reader has no task; its work wakes it.
        consuming func resumeLettingGo(throwing error: (any Error)? = nil) {
            if self.continuation != nil { self.inline = nil }
            self.resume(throwing: error)
        }

        /// Lets the waiter go on: resumes its task, or wakes a parked reader.
        func resume(throwing error: (any Error)? = nil) {
            if let continuation {
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            } else {
                self.inline?.wake(error)
            }
        }
    }

    /// A read waiter's work on the reactor's thread, and what happened to the waiter meanwhile.
    ///
    /// An object, so that a waiter without it costs one word: every socket holds two waiter slots.
    /// A subclass supplies the work (`TCPInlineReads`, for a waiting task and a parked reader alike),
    /// so that a wait allocates one object. Its variables change only under the handle's lock.
    class InlineReads: @unchecked Sendable {
        /// Whether the reactor's thread is running ``handleReads(shortReadDrains:)`` now.
        final var isRunning = false
        /// A ``wakeReader()`` that came while ``handleReads(shortReadDrains:)`` ran, delivered once it
        /// returns.
        final var isWakeRequested = false
        /// A close or cancellation that came while ``handleReads(shortReadDrains:)`` ran, delivered once
        /// it returns: the waiter must not go on while the reactor's thread still works for it.
        final var failure: (any Error)?

        /// On the reactor's thread: reads until `EAGAIN` (returns `true`: keep waiting) or until the
        /// waiter must go on (returns `false`). Here: nothing is read, the waiter goes on.
        ///
        /// - Parameter shortReadDrains: Whether a read that returns fewer bytes than asked for may
        ///   stand for the `EAGAIN` (see ``signal(readable:writable:mayHandleReads:shortReadDrains:)``).
        func handleReads(shortReadDrains: Bool) -> Bool { false }

        /// For a parked reader, what goes on in place of a task: with the error that ended the wait, or
        /// `nil` when it is readable or woken. Called once. Here: nothing, as a task's waiter is
        /// resumed through its continuation.
        func wake(_ error: (any Error)?) {}
    }

    private struct State {
        var isClosed = false
        var isDescriptorClosed = false
        var activeCalls = 0
        var readEdges: UInt64 = 0
        var writeEdges: UInt64 = 0
        var readWaiter: Waiter?
        var writeWaiter: Waiter?
        var nextWaiterID: UInt64 = 0
        /// A ``wakeReader()`` that found no reader waiting: the next read wait or park returns at once,
        /// so a wake that comes just before the reader waits is not lost.
        var isWakePending = false

        /// Whether a waiter for an edge in `direction` newer than `edges` need not wait: `.closed`,
        /// or `.ready` when that edge came or, for reads, a wake is pending (which this takes).
        /// `nil`: it waits.
        mutating func readiness(_ direction: Direction, since edges: UInt64) -> Readiness? {
            if self.isClosed { return .closed }
            if (direction == .read ? self.readEdges : self.writeEdges) != edges { return .ready }
            if direction == .read && self.isWakePending {
                self.isWakePending = false
                return .ready
            }
            return nil
        }
    }

    /// Why a wait ends before it begins (see ``State/readiness(_:since:)``).
    private enum Readiness {
        case closed
        case ready
    }

    let fd: Int32
    let id: UInt64
    private let reactor: any Reactor
    private let state = Mutex(State())

    init(fd: Int32, id: UInt64, reactor: any Reactor) {
        self.fd = fd
        self.id = id
        self.reactor = reactor
    }

    var isClosed: Bool { self.state.withLock { $0.isClosed } }

    /// Runs a non-blocking system call until it completes, waiting for readiness on `EAGAIN`.
    ///
    /// `body` must retry `EINTR` itself and map `EAGAIN`/`EWOULDBLOCK` to `.wouldBlock`.
    ///
    /// - Throws: ``SocketError`` (closed, or the call's errno); `CancellationError` if the task is
    ///   cancelled while waiting.
    func perform<Value>(
        _ direction: Direction,
        call: String,
        _ body: (Int32) -> CallResult<Value>
    ) async throws -> Value {
        while true {
            let edges = try self.beginCall(direction, call: call)
            let result = body(self.fd)
            self.endCall()
            switch result {
            case .done(let value):
                return value
            case .failed(let code):
                throw SocketError(errno: code, call: call)
            case .wouldBlock:
                try await self.wait(direction, since: edges, call: call)
            }
        }
    }

    /// Marks the start of a system call; returns the edge count of `direction` seen before it.
    func beginCall(_ direction: Direction, call: String) throws(SocketError) -> UInt64 {
        let edges: UInt64? = self.state.withLock { state in
            guard !state.isClosed else { return nil }
            state.activeCalls += 1
            return direction == .read ? state.readEdges : state.writeEdges
        }
        guard let edges else { throw SocketError.closed(call) }
        return edges
    }

    /// Marks the end of a system call; closes the descriptor if a close is pending and this was the last.
    func endCall() {
        let closeNow = self.state.withLock { state in
            state.activeCalls -= 1
            if state.isClosed && state.activeCalls == 0 && !state.isDescriptorClosed {
                state.isDescriptorClosed = true
                return true
            }
            return false
        }
        if closeNow { self.closeDescriptor() }
    }

    /// Suspends until an edge in `direction` newer than `edges` arrives, the handle closes or the
    /// task is cancelled.
    ///
    /// Given `reads` (for `.read`), the reactor's thread handles the reads meanwhile: on each
    /// read edge it may handle (see ``signal(readable:writable:mayHandleReads:shortReadDrains:)``) it
    /// runs ``InlineReads/handleReads(shortReadDrains:)`` there, and the wait goes on while that returns
    /// `true`; on other edges the task is resumed as without it. It must read until `EAGAIN`, or a short
    /// read where the report allows, before it returns `true` (the next edge comes only with new data),
    /// and must be short: every socket of the process
    /// waits while it runs. It never overlaps the waiting task: a close or cancellation while it runs
    /// resumes the task after it returns. This saves the hand-over from the reactor's thread to a task
    /// for each read, which on an idle machine is most of a small message's delay in a broker.
    ///
    /// One function, not a wrapper per use: each async layer deepens every waiting connection's
    /// frames, which a task keeps for its lifetime.
    func wait(
        _ direction: Direction,
        since edges: UInt64,
        call: String,
        reads: InlineReads? = nil
    ) async throws {
        let waiterID = self.state.withLock { state in
            state.nextWaiterID &+= 1
            return state.nextWaiterID
        }
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                enum Outcome { case wait, ready, closed, cancelled, busy }
                let outcome: Outcome = self.state.withLock { state in
                    switch state.readiness(direction, since: edges) {
                    case .closed: return .closed
                    case .ready: return .ready
                    case nil: break
                    }
                    if Task.isCancelled { return .cancelled }
                    let waiter = Waiter(id: waiterID, continuation: continuation, inline: reads)
                    switch direction {
                    case .read:
                        if state.readWaiter != nil { return .busy }
                        state.readWaiter = waiter
                    case .write:
                        if state.writeWaiter != nil { return .busy }
                        state.writeWaiter = waiter
                    }
                    return .wait
                }
                switch outcome {
                case .wait: self.reactor.watch(self, for: direction)
                case .ready: continuation.resume()
                case .closed: continuation.resume(throwing: SocketError.closed(call))
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .busy: continuation.resume(throwing: SocketError(errno: EBUSY, call: call + " (concurrent)"))
                }
            }
        } onCancel: {
            let waiter: Waiter? = self.state.withLock { state in
                switch direction {
                case .read:
                    guard state.readWaiter?.id == waiterID else { return nil }
                    if state.readWaiter?.inline?.isRunning == true {
                        state.readWaiter?.inline?.failure = CancellationError()
                        return nil
                    }
                    defer { state.readWaiter = nil }
                    return state.readWaiter
                case .write:
                    guard state.writeWaiter?.id == waiterID else { return nil }
                    defer { state.writeWaiter = nil }
                    return state.writeWaiter
                }
            }
            waiter?.resumeLettingGo(throwing: CancellationError())
        }
    }

    /// Parks a reader that has no task: like ``wait(_:since:call:reads:)`` for `.read`, with
    /// `reads` doing the reactor thread's work, but instead of resuming a task the handle calls
    /// `reads.wake(_:)` once, from whichever thread ends the wait: with `nil` when a read edge comes
    /// that the reactor's thread may not handle or ``InlineReads/handleReads(shortReadDrains:)`` returns
    /// `false`, or on ``wakeReader()``; with the error when the handle closes. The inline reads run as
    /// for a waiting task, never after `wake(_:)`.
    ///
    /// An idle connection thus needs no task, only this waiter: the reactor's thread handles its
    /// small reads, and a task is started for it when it wakes.
    ///
    /// - Returns: `false`, without parking, when the handle is closed, a read edge newer than
    ///   `edges` came, a wake is pending, or a reader already waits.
    func park(since edges: UInt64, reads: InlineReads) -> Bool {
        let parked = self.state.withLock { state in
            guard state.readiness(.read, since: edges) == nil, state.readWaiter == nil else { return false }
            state.nextWaiterID &+= 1
            state.readWaiter = Waiter(id: state.nextWaiterID, continuation: nil, inline: reads)
            return true
        }
        if parked { self.reactor.watch(self, for: .read) }
        return parked
    }

    /// Ends the read waiter's wait as if the socket were readable: a waiting task resumes, a parked
    /// reader wakes; now, or once the reactor's thread returns from its inline work. With no reader
    /// waiting, the next read wait or park returns at once instead.
    ///
    /// For an owner that wants its reader to look again at something other than the socket.
    func wakeReader() {
        let waiter: Waiter? = self.state.withLock { state in
            guard let waiter = state.readWaiter else {
                state.isWakePending = true
                return nil
            }
            if waiter.inline?.isRunning == true {
                waiter.inline?.isWakeRequested = true
                return nil
            }
            state.readWaiter = nil
            return waiter
        }
        waiter?.resumeLettingGo()
    }

    /// Called by the reactor's thread when the kernel reports readiness.
    ///
    /// `mayHandleReads` says whether a read waiter's inline work may run here (see
    /// ``wait(_:since:call:reads:)``): the reactor allows it for a report that came alone
    /// while its thread has room (``ReactorLoad``). When several sockets are ready at once, or the
    /// thread is busy, their waiting tasks are resumed instead and handle the reads on all cores: a
    /// burst keeps its parallelism, a lone message its short path.
    ///
    /// `shortReadDrains`: the report is edge-triggered and says the peer has not closed, so a read
    /// shorter than asked for has emptied the socket, and bytes that come later bring a report of
    /// their own: the inline work need not make one more read to see `EAGAIN`, a system call per
    /// message. A report of a hang-up or error reads on until the end.
    func signal(readable: Bool, writable: Bool, mayHandleReads: Bool, shortReadDrains: Bool = false) {
        var (reader, writer, inline): (Waiter?, Waiter?, InlineReads?) = self.state.withLock { state in
            var reader: Waiter?
            var writer: Waiter?
            var inline: InlineReads?
            if readable {
                state.readEdges &+= 1
                if mayHandleReads, let handler = state.readWaiter?.inline {
                    handler.isRunning = true
                    inline = handler
                } else {
                    reader = state.readWaiter
                    state.readWaiter = nil
                }
            }
            if writable {
                state.writeEdges &+= 1
                writer = state.writeWaiter
                state.writeWaiter = nil
            }
            return (reader, writer, inline)
        }
        if let waiter = reader.take() { waiter.resumeLettingGo() }
        writer.take()?.resume()
        guard let work = inline.take() else { return }
        guard let (waiter, failure) = self.runInline(consume work, shortReadDrains: shortReadDrains) else { return }
        waiter.resumeLettingGo(throwing: failure)
    }

    /// Runs a read waiter's inline work on the reactor's thread, then keeps the waiter (`nil`) or
    /// returns it to resume, with the failure to resume it with.
    private func runInline(_ inline: consuming InlineReads, shortReadDrains: Bool) -> (Waiter, (any Error)?)? {
        let keepWaiting = inline.handleReads(shortReadDrains: shortReadDrains)
        _ = consume inline
        // The waiter is read in place and only taken out when it goes on: this runs for every read
        // the reactor's thread handles.
        let (waiter, failure): (Waiter?, (any Error)?) = self.state.withLock { state in
            let reads = state.readWaiter?.inline
            if let failure = reads?.failure { return (state.readWaiter.take(), failure) }
            if keepWaiting && reads?.isWakeRequested != true {
                reads?.isRunning = false
                return (nil, nil)
            }
            return (state.readWaiter.take(), nil)
        }
        guard let waiter else {
            if keepWaiting { self.reactor.watch(self, for: .read) }
            return nil
        }
        return (waiter, failure)
    }

    /// Closes the socket: idempotent; wakes waiting operations with a closed ``SocketError``.
    ///
    /// The descriptor itself is closed now, or by the last system call still running on it.
    func close() {
        let (reader, writer, closeNow): (Waiter?, Waiter?, Bool) = self.state.withLock { state in
            guard !state.isClosed else { return (nil, nil, false) }
            state.isClosed = true
            var reader = state.readWaiter
            let writer = state.writeWaiter
            if reader?.inline?.isRunning == true {
                // Resumed when the reactor's thread is done with it (see `runInline`).
                state.readWaiter?.inline?.failure = SocketError.closed("read")
                reader = nil
            } else {
                state.readWaiter = nil
            }
            state.writeWaiter = nil
            let closeNow = state.activeCalls == 0
            if closeNow { state.isDescriptorClosed = true }
            return (reader, writer, closeNow)
        }
        if closeNow { self.closeDescriptor() }
        reader?.resumeLettingGo(throwing: SocketError.closed("read"))
        writer?.resume(throwing: SocketError.closed("write"))
    }

    private func closeDescriptor() {
        self.reactor.deregister(self)
        PlatformShims.close(self.fd)
    }
}
