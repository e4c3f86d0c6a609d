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
        var continuation: CheckedContinuation<Void, any Error>
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
    func wait(_ direction: Direction, since edges: UInt64, call: String) async throws {
        let waiterID = self.state.withLock { state in
            state.nextWaiterID &+= 1
            return state.nextWaiterID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case wait, ready, closed, cancelled, busy }
                let outcome: Outcome = self.state.withLock { state in
                    if state.isClosed { return .closed }
                    let current = direction == .read ? state.readEdges : state.writeEdges
                    if current != edges { return .ready }
                    if Task.isCancelled { return .cancelled }
                    let waiter = Waiter(id: waiterID, continuation: continuation)
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
                    defer { state.readWaiter = nil }
                    return state.readWaiter
                case .write:
                    guard state.writeWaiter?.id == waiterID else { return nil }
                    defer { state.writeWaiter = nil }
                    return state.writeWaiter
                }
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Called by the reactor's thread when the kernel reports readiness.
    func signal(readable: Bool, writable: Bool) {
        let (reader, writer): (Waiter?, Waiter?) = self.state.withLock { state in
            var reader: Waiter?
            var writer: Waiter?
            if readable {
                state.readEdges &+= 1
                reader = state.readWaiter
                state.readWaiter = nil
            }
            if writable {
                state.writeEdges &+= 1
                writer = state.writeWaiter
                state.writeWaiter = nil
            }
            return (reader, writer)
        }
        reader?.continuation.resume()
        writer?.continuation.resume()
    }

    /// Closes the socket: idempotent; wakes waiting operations with a closed ``SocketError``.
    ///
    /// The descriptor itself is closed now, or by the last system call still running on it.
    func close() {
        let (reader, writer, closeNow): (Waiter?, Waiter?, Bool) = self.state.withLock { state in
            guard !state.isClosed else { return (nil, nil, false) }
            state.isClosed = true
            let reader = state.readWaiter
            let writer = state.writeWaiter
            state.readWaiter = nil
            state.writeWaiter = nil
            let closeNow = state.activeCalls == 0
            if closeNow { state.isDescriptorClosed = true }
            return (reader, writer, closeNow)
        }
        if closeNow { self.closeDescriptor() }
        reader?.continuation.resume(throwing: SocketError.closed("read"))
        writer?.continuation.resume(throwing: SocketError.closed("write"))
    }

    private func closeDescriptor() {
        self.reactor.deregister(self)
        PlatformShims.close(self.fd)
    }
}
