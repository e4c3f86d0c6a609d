import CoatyCommunication

/// Stops one piece of work started with ``ControllerContext/spawn(_:)``.
public struct WorkHandle: Sendable {
    let signal: OneShotSignal

    /// Cancels the work. Returns without suspending; the work's task is cancelled shortly after.
    public func cancel() {
        self.signal.fire()
    }
}

/// Hands spawned work to the running container's task group.
struct WorkSpawner: Sendable {
    struct Item: Sendable {
        let name: String
        let work: @Sendable () async throws -> Void
        let signal: OneShotSignal
    }

    let continuation: AsyncStream<Item>.Continuation

    func spawn(name: String, _ work: @escaping @Sendable () async throws -> Void) -> WorkHandle {
        let signal = OneShotSignal()
        if case .terminated = self.continuation.yield(Item(name: name, work: work, signal: signal)) {
            signal.fire()
        }
        return WorkHandle(signal: signal)
    }
}
