import Synchronization

/// A `Clock` that only moves when the test advances it, so timeouts and keep-alives run without
/// waiting real time. Sleepers wake when ``advance(by:)`` passes their deadline; tests wait for the
/// code under test to go to sleep with ``waitForSleepers(count:)`` instead of sleeping themselves.
package final class ManualClock: Clock, Sendable {
    package struct Instant: InstantProtocol {
        package var offset: Duration

        package func advanced(by duration: Duration) -> Instant { Instant(offset: self.offset + duration) }
        package func duration(to other: Instant) -> Duration { other.offset - self.offset }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: UInt64
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var watchers: [(id: UInt64, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    package init() {}

    package var now: Instant { self.state.withLock { $0.now } }
    package var minimumResolution: Duration { .zero }

    /// How many tasks sleep on this clock now.
    package var sleeperCount: Int { self.state.withLock { $0.sleepers.count } }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = self.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome {
                    case sleeping([CheckedContinuation<Void, Never>])
                    case due
                    case cancelled
                }
                let outcome: Outcome = self.state.withLock { state in
                    if Task.isCancelled { return .cancelled }
                    if deadline <= state.now { return .due }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    let count = state.sleepers.count
                    let satisfied = state.watchers.filter { $0.count <= count }.map(\.continuation)
                    state.watchers.removeAll { $0.count <= count }
                    return .sleeping(satisfied)
                }
                switch outcome {
                case .sleeping(let watchers): for watcher in watchers { watcher.resume() }
                case .due: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = self.state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the time forward and wakes every sleeper whose deadline has come.
    package func advance(by duration: Duration) {
        let due = self.state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.map(\.continuation)
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.resume() }
    }

    /// Returns once at least `count` tasks sleep on this clock, or when the waiting task is cancelled,
    /// so that a suite's time limit ends a wait for sleepers that never come.
    package func waitForSleepers(count: Int) async {
        let id = self.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = self.state.withLock { state in
                    // Checked under the lock the cancellation handler takes: one of the two resumes.
                    if Task.isCancelled || state.sleepers.count >= count { return true }
                    state.watchers.append((id, count, continuation))
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            let watcher = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.watchers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.watchers.remove(at: index).continuation
            }
            watcher?.resume()
        }
    }
}
