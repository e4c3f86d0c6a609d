import CoatyCore
import Synchronization

/// A clock that moves only when a test advances it, so a test of a timeout or a backoff waits no
/// real time. Every sleep that starts is announced on ``sleeps`` with its duration.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        let offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: self.offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - self.offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [WaiterToken: Instant] = [:]
    }

    private let state = Mutex(State())
    private let waiters = WaiterRegistry()
    /// The duration of every sleep that starts, in order.
    let sleeps: AsyncStream<Duration>
    private let sleepsContinuation: AsyncStream<Duration>.Continuation

    init() {
        (self.sleeps, self.sleepsContinuation) = AsyncStream.makeStream()
    }

    var now: Instant { self.state.withLock { $0.now } }

    var minimumResolution: Duration { .zero }

    /// How many sleeps are waiting for the clock to advance.
    var pendingSleeps: Int { self.state.withLock { $0.sleepers.count } }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let token = self.waiters.makeToken()
        let isDue = self.state.withLock { state -> Bool in
            self.sleepsContinuation.yield(state.now.duration(to: deadline))
            guard state.now < deadline else { return true }
            state.sleepers[token] = deadline
            return false
        }
        if isDue {
            self.waiters.discard(token)
            return
        }
        try await self.waiters.wait(token) {
            _ = self.state.withLock { $0.sleepers.removeValue(forKey: token) }
        }
    }

    /// Moves the clock on, ending the sleeps that are due.
    func advance(by duration: Duration) {
        let due = self.state.withLock { state -> [WaiterToken] in
            state.now = state.now.advanced(by: duration)
            let due = state.sleepers.filter { !(state.now < $0.value) }.map(\.key)
            for token in due { state.sleepers[token] = nil }
            return due
        }
        for token in due { self.waiters.resume(token) }
    }
}
