import CoatyCore
import CoatySockets
import Synchronization

/// The connect-timeout and keep-alive deadline of one connection, checked by the broker's sweeper.
///
/// One broker-wide sweeper task checks every connection a few times per second instead of one sleeping
/// task per connection, which keeps idle connections cheap.
final class ActivityWatch: Sendable {
    private struct State: Sendable {
        var lastActivity: Duration
        var limit: Duration?
        var hasFired = false
    }

    private let state: Mutex<State>
    /// The connection's socket; `nil` for a connection without one (tests, the fuzz harness).
    private let socket: (any ByteStreamConnection)?
    /// The broker's clock (see ``MQTTBroker/Configuration/clock``).
    private let clock: ElapsedClock

    init(socket: (any ByteStreamConnection)?, limit: Duration?, clock: ElapsedClock) {
        self.socket = socket
        self.clock = clock
        self.state = Mutex(State(lastActivity: clock.now, limit: limit))
    }

    /// Records that a whole packet arrived.
    func touch() {
        let now = self.clock.now
        self.state.withLock { $0.lastActivity = now }
    }

    /// Sets the allowed silence (1.5 × keep-alive after CONNECT) or `nil` for none, counted from now.
    func setLimit(_ limit: Duration?) {
        let now = self.clock.now
        self.state.withLock {
            $0.limit = limit
            $0.lastActivity = now
        }
    }

    /// Whether the deadline passed and the socket was closed.
    var hasFired: Bool { self.state.withLock { $0.hasFired } }

    /// Closes the socket (which wakes the reader) if the allowed silence has passed.
    func check(now: Duration) {
        let expired = self.state.withLock { state -> Bool in
            guard !state.hasFired, let limit = state.limit, state.lastActivity + limit <= now else { return false }
            state.hasFired = true
            return true
        }
        if expired { self.socket?.close() }
    }
}
