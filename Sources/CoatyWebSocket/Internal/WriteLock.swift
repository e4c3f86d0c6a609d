import CoatyCore
import Synchronization

/// An asynchronous lock that keeps the frames of concurrent writers (the MQTT writer, and the reader
/// answering a ping or a close) from interleaving on the socket.
///
/// Uncontended, taking and releasing it costs one `Mutex` each. Waiters are served in order: the
/// lock is handed to the longest waiter, whose wait a ``WaiterRegistry`` ends exactly once; a
/// cancelled waiter throws `CancellationError`, and ``close(_:)`` fails every waiter and later call.
final class WriteLock: Sendable {
    private struct State {
        var isLocked = false
        var isClosed = false
        /// The waiting tasks' tokens, longest waiting first.
        var waiting: [WaiterToken] = []
    }

    private enum Attempt {
        case locked
        case closed
        case wait
    }

    private let state = Mutex(State())
    private let waiters = WaiterRegistry()

    /// How many tasks are suspended waiting for the lock.
    var waiterCount: Int { self.waiters.count }

    /// Takes the lock, suspending while another task holds it.
    ///
    /// - Throws: `closedError` after ``close(_:)``; `CancellationError` if cancelled while waiting.
    func lock(closedError: @autoclosure () -> any Error) async throws {
        switch self.state.withLock({ self.take(&$0, queueing: nil) }) {
        case .locked: return
        case .closed: throw closedError()
        case .wait: break
        }
        let token = self.waiters.makeToken()
        switch self.state.withLock({ self.take(&$0, queueing: token) }) {
        case .locked:
            self.waiters.discard(token)
        case .closed:
            self.waiters.discard(token)
            throw closedError()
        case .wait:
            // Resumed by `unlock()` with the lock handed over, or by `close(_:)` with its error.
            try await self.waiters.wait(token) {
                self.state.withLock { state in state.waiting.removeAll { $0 == token } }
            }
        }
    }

    /// Takes the lock if it is free; otherwise queues `token`, if given.
    private func take(_ state: inout State, queueing token: WaiterToken?) -> Attempt {
        if state.isClosed { return .closed }
        if !state.isLocked {
            state.isLocked = true
            return .locked
        }
        if let token { state.waiting.append(token) }
        return .wait
    }

    /// Takes the lock if it is free, without waiting.
    func tryLock() -> Bool {
        self.state.withLock { self.take(&$0, queueing: nil) == .locked }
    }

    /// Releases the lock, handing it to the longest waiter if there is one. A waiter cancelled
    /// between leaving the queue and being resumed does not take it; the next one does.
    func unlock() {
        while let next = self.state.withLock({ state -> WaiterToken? in
            guard !state.waiting.isEmpty else {
                state.isLocked = false
                return nil
            }
            return state.waiting.removeFirst()
        }) {
            if self.waiters.resume(next) { return }
        }
    }

    /// Fails every waiter with `error` and every later ``lock(closedError:)``.
    func close(_ error: any Error) {
        let waiting = self.state.withLock { state in
            state.isClosed = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for token in waiting { _ = self.waiters.resume(token, throwing: error) }
    }
}
