import Synchronization

/// A one-shot signal that many tasks can wait for: the manager's stop, a container's start and stop,
/// a spawned piece of work's cancellation, and a queued subscription being in place.
package final class OneShotSignal: Sendable {
    private struct State {
        var isFired = false
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Whether the signal has fired.
    package var isFired: Bool { self.state.withLock { $0.isFired } }

    /// Fires the signal, resuming every waiter.
    package func fire() {
        let waiters = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isFired = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Suspends until the signal fires or the task is cancelled.
    package func wait() async {
        let id = self.state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = self.state.withLock { state -> Bool in
                    if state.isFired || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
