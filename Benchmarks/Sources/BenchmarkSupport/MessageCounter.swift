import Synchronization

/// Counts received messages and wakes one waiter when the expected count has arrived.
package final class MessageCounter: Sendable {
    private struct State {
        var count = 0
        var target = Int.max
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    package init() {}

    /// The messages counted since the last ``reset(target:)``.
    package var count: Int { self.state.withLock { $0.count } }

    /// Starts counting from zero towards `target`.
    package func reset(target: Int) {
        self.state.withLock { $0 = State(count: 0, target: target, waiter: nil) }
    }

    /// Counts one message.
    package func received() {
        let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.count += 1
            guard state.count == state.target else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Returns once the target count has arrived.
    package func waitForTarget() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = self.state.withLock { state in
                if state.count >= state.target { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}
