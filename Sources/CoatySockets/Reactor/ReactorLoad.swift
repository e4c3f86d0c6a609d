/// How busy a reactor's thread has been lately: whether it has room to handle reads itself (see
/// `SocketHandle.wait(_:since:call:reads:)`).
///
/// The thread handling a lone small read saves the hand-over to a task, but while it does, every other
/// socket waits and the executor's threads may sit idle. So it does so only while it has spent a good
/// part of its time waiting for reports: a request/response exchange leaves it waiting for each
/// answer, a stream of acknowledgements or small publishes keeps it busy, and then the tasks take the
/// reads again, on every core.
///
/// A pure value: the reactor reports when it goes to wait and when it wakes, in nanoseconds of a
/// monotonic clock, and asks ``hasRoom``.
struct ReactorLoad {
    /// Moving averages of the time per round spent handling reports and waiting, each round weighing
    /// 1/16.
    private(set) var busy: Int64 = 0
    private(set) var idle: Int64 = 0
    private var wokeAt: Int64?
    private var waitingSince: Int64?

    /// The most one round adds to ``busy``: 250 µs, far more than the thread takes to handle a lone
    /// message. A longer round is the thread being preempted (on a machine with fewer cores than busy
    /// threads, a scheduler slice is milliseconds), not load: counted whole, one such round took the
    /// room away for the next few dozen messages, whose reads and every forward then went through
    /// tasks, just when the machine was already short of time. Under real load the waits shrink, so
    /// capped rounds still leave no room.
    static let longestCountedRound: Int64 = 250_000

    /// The thread goes to wait for readiness at `now`.
    mutating func waiting(at now: Int64) {
        if let wokeAt { self.busy += (min(now - wokeAt, Self.longestCountedRound) - self.busy) >> 4 }
        self.waitingSince = now
    }

    /// The thread's wait returned at `now`.
    mutating func woke(at now: Int64) {
        if let waitingSince { self.idle += (now - waitingSince - self.idle) >> 4 }
        self.wokeAt = now
    }

    /// Whether the thread spent at most four fifths of its recent time handling reports.
    ///
    /// Not half: in a ping-pong with a quick peer the thread handles each message (a read, the routing
    /// and a send that wakes the receiver) about as long as it then waits for the answer, and nothing
    /// else waits meanwhile. Past four fifths, reports queue up behind it.
    var hasRoom: Bool { self.busy <= 4 * self.idle }

    /// Whether a read waiter's inline work may run for a round of `reports` readiness reports: only
    /// for a report that came alone, while the thread has room. Several at once are a burst, which
    /// the tasks handle on all cores.
    ///
    /// Two in a round are often a message and an acknowledgement (a Coaty callee's Call and its
    /// caller's SUBACK, when both agents share the thread). Handling both here made Call → Return
    /// through mosquitto 5 % faster but not through the embedded broker, so that embedded / mosquitto
    /// went from 1.06× to 1.13× in alternated runs (Docs/Benchmarks.md). So a round of two still goes
    /// to the tasks.
    func mayHandleReads(reports: Int) -> Bool { reports == 1 && self.hasRoom }
}
