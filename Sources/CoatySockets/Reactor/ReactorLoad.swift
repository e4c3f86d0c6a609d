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

    /// The thread goes to wait for readiness at `now`.
    mutating func waiting(at now: Int64) {
        if let wokeAt { self.busy += (now - wokeAt - self.busy) >> 4 }
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
    func mayHandleReads(reports: Int) -> Bool { reports == 1 && self.hasRoom }
}
