import CoatyCore
import Synchronization

/// A one-shot signal that many tasks can wait for: a container's start and stop, a spawned piece of
/// work's cancellation, a closed in-process connection.
package final class OneShotSignal: Sendable {
    package init() {}

    private struct State {
        var isFired = false
        var waiting: Set<WaiterToken> = []
    }

    private let state = Mutex(State())
    private let waiters = WaiterRegistry()

    /// Whether the signal has fired.
    package var isFired: Bool { self.state.withLock { $0.isFired } }

    /// Fires the signal, resuming every waiter.
    package func fire() {
        let waiting = self.state.withLock { state -> Set<WaiterToken> in
            state.isFired = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for token in waiting { self.waiters.resume(token) }
    }

    /// Suspends until the signal fires or the task is cancelled.
    package func wait() async {
        let token = self.waiters.makeToken()
        let isFired = self.state.withLock { state -> Bool in
            if !state.isFired { state.waiting.insert(token) }
            return state.isFired
        }
        if isFired {
            self.waiters.discard(token)
            return
        }
        try? await self.waiters.wait(token) {
            _ = self.state.withLock { $0.waiting.remove(token) }
        }
    }
}
