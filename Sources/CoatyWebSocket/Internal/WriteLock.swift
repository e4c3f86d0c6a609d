import Synchronization

/// An asynchronous lock that keeps the frames of concurrent writers (the MQTT writer, and the reader
/// answering a ping or a close) from interleaving on the socket.
///
/// Uncontended, taking and releasing it costs one `Mutex` each. Waiters are served in order; a
/// cancelled waiter throws `CancellationError`, and ``close()`` fails every waiter and later call.
final class WriteLock: Sendable {
    private struct State {
        var isLocked = false
        var isClosed = false
        var nextToken: UInt64 = 0
        var waiters: [(token: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    private let state = Mutex(State())

    /// Takes the lock, suspending while another task holds it.
    ///
    /// - Throws: `closedError` after ``close()``; `CancellationError` if cancelled while waiting.
    func lock(closedError: @autoclosure () -> any Error) async throws {
        enum Fast { case locked, closed, wait(UInt64) }
        let fast: Fast = self.state.withLock { state in
            if state.isClosed { return .closed }
            if !state.isLocked {
                state.isLocked = true
                return .locked
            }
            state.nextToken += 1
            return .wait(state.nextToken)
        }
        switch fast {
        case .locked: return
        case .closed: throw closedError()
        case .wait(let token):
            let error = closedError()
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    enum Outcome { case wait, locked, closed, cancelled }
                    let outcome: Outcome = self.state.withLock { state in
                        if state.isClosed { return .closed }
                        if !state.isLocked {
                            state.isLocked = true
                            return .locked
                        }
                        if Task.isCancelled { return .cancelled }
                        state.waiters.append((token, continuation))
                        return .wait
                    }
                    switch outcome {
                    case .wait: break
                    case .locked: continuation.resume()
                    case .closed: continuation.resume(throwing: error)
                    case .cancelled: continuation.resume(throwing: CancellationError())
                    }
                }
            } onCancel: {
                let waiter = self.state.withLock { state -> CheckedContinuation<Void, any Error>? in
                    guard let index = state.waiters.firstIndex(where: { $0.token == token }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                waiter?.resume(throwing: CancellationError())
            }
        }
    }

    /// Takes the lock if it is free, without waiting.
    func tryLock() -> Bool {
        self.state.withLock { state in
            guard !state.isClosed, !state.isLocked else { return false }
            state.isLocked = true
            return true
        }
    }

    /// Releases the lock, handing it to the longest waiter if there is one.
    func unlock() {
        let next = self.state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiters.isEmpty else {
                state.isLocked = false
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }

    /// Fails every waiter with `error` and every later ``lock(closedError:)``.
    func close(_ error: any Error) {
        let waiters = self.state.withLock { state in
            state.isClosed = true
            defer { state.waiters = [] }
            return state.waiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume(throwing: error) }
    }
}
