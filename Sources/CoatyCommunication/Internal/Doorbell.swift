import CoatyCore
import Synchronization

/// A single-consumer wake-up signal: ``ring()`` from anywhere (synchronously), ``wait()`` in one task.
///
/// Rings are coalesced: a ring while nobody waits makes the next ``wait()`` return at once.
package final class Doorbell: Sendable {
    package init() {}

    private enum State {
        case quiet
        case rung
        case waiting(WaiterToken)
    }

    private let state = Mutex(State.quiet)
    private let waiters = WaiterRegistry()

    /// Wakes the waiter, or makes the next wait return at once.
    package func ring() {
        let waiter = self.state.withLock { state -> WaiterToken? in
            defer { if case .waiting = state { state = .quiet } else { state = .rung } }
            if case .waiting(let token) = state { return token }
            return nil
        }
        if let waiter { self.waiters.resume(waiter) }
    }

    /// Suspends until the bell rings or the task is cancelled.
    package func wait() async {
        let token = self.waiters.makeToken()
        let isRung = self.state.withLock { state -> Bool in
            if case .rung = state {
                state = .quiet
                return true
            }
            state = .waiting(token)
            return false
        }
        if isRung {
            self.waiters.discard(token)
            return
        }
        try? await self.waiters.wait(token) {
            self.state.withLock { state in
                if case .waiting(let waiting) = state, waiting == token { state = .quiet }
            }
        }
    }
}
