import Synchronization

/// Stops one piece of work started with ``ControllerContext/spawn(_:)``.
public struct WorkHandle: Sendable {
    let signal: StopSignal

    /// Cancels the work. Returns without suspending; the work's task is cancelled shortly after.
    public func cancel() {
        self.signal.fire()
    }
}

/// A one-shot signal that any number of tasks can wait for.
final class StopSignal: Sendable {
    private struct State {
        var fired = false
        var nextToken: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    func fire() {
        let waiters = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    var isFired: Bool { self.state.withLock { $0.fired } }

    /// Suspends until fired or until the calling task is cancelled.
    func wait() async {
        let token = self.state.withLock { state in
            state.nextToken += 1
            return state.nextToken
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = self.state.withLock { state in
                    if state.fired || Task.isCancelled { return true }
                    state.waiters[token] = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            let waiter = self.state.withLock { $0.waiters.removeValue(forKey: token) }
            waiter?.resume()
        }
    }
}

/// Hands spawned work to the running container's task group.
struct WorkSpawner: Sendable {
    struct Item: Sendable {
        let name: String
        let work: @Sendable () async throws -> Void
        let signal: StopSignal
    }

    let continuation: AsyncStream<Item>.Continuation

    func spawn(name: String, _ work: @escaping @Sendable () async throws -> Void) -> WorkHandle {
        let signal = StopSignal()
        if case .terminated = self.continuation.yield(Item(name: name, work: work, signal: signal)) {
            signal.fire()
        }
        return WorkHandle(signal: signal)
    }
}
