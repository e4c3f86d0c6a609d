import CoatyCore
import CoatyTransport

/// The shared state of a ``CommunicationManager`` as a pure value: the connection's phase, the
/// routing table and the outbox. Each method takes one event and returns what the manager has to do;
/// it performs no I/O and suspends nowhere. The manager keeps the value behind one lock, performs the
/// actions (transport calls, resuming waiters by their ``WaiterToken``) and feeds the outcomes back as
/// events, so every interleaving of the manager's tasks is a sequence of events that a test can replay.
///
/// ## Phases
///
/// ```
///            start                 connected           subscribed          join sent
/// idle ─────────────▶ connecting ───────────▶ subscribing ───────▶ joining ─────────▶ online
///  ▲                    ▲    │ connection ended     │                 │                  │
///  │                    │    ▼  (any phase from     ▼                 ▼                  ▼
///  │     backoff elapsed└─ reconnectWait ◀──────────┴─────────────────┴──────────────────┘
///  │                          │
///  │ run ended                │ stop requested (from every running phase)
///  └──────────────────── stopping ◀─────────────────────────────────────────────────────────
/// ```
///
/// - ``Phase/idle(stopRequested:)``: `run()` is not running. A stop requested now makes the next
///   `run()` return at once.
/// - ``Phase/connecting(_:)``: the transport opens a connection.
/// - ``Phase/subscribing(_:connection:)``: every observed filter is subscribed, in as few calls as
///   observations allow. Observations made now are picked up by it and return at once, as offline.
/// - ``Phase/joining(_:_:)``: the join is going out. Control commands are queued for the send loop.
/// - ``Phase/online(_:)``: publications and subscriptions go straight to the connection from the
///   calling task when nothing queued is ahead of them, else through the send loop.
/// - ``Phase/reconnectWait(_:)``: waiting out the backoff after a failed or lost connection; the
///   delay doubles from the initial to the maximum, and starts over after a connection that got online.
/// - ``Phase/stopping(_:)``: a stop was requested. Before online the attempt is abandoned (its
///   connection closes abruptly, so the last will undoes a join already sent); online, the send loop
///   takes one final batch and sends it, the unjoin goes out and the connection closes gracefully.
///
/// A connection's ``ConnectedSession`` (queued commands, pending subscriptions, the send loop) is
/// carried by the phases that have one; the transition that ends it returns its waiters to resume.
struct ManagerStateMachine<Connection: Sendable, Receiver: Sendable>: Sendable {
    enum Phase: Sendable {
        case idle(stopRequested: Bool)
        case connecting(Attempt)
        /// Boxed: an opaque connection (an existential) would make the whole phase address-only, so
        /// that every match on it, in the hot paths too, copied it through its value witness.
        indirect case subscribing(Attempt, connection: Connection)
        case joining(Attempt, ConnectedSession<Connection>)
        case online(ConnectedSession<Connection>)
        case reconnectWait(Backoff)
        case stopping(Stop)
        /// Only inside a method that changes a phase's associated value in place.
        case modifying
    }

    /// One connection attempt, until it is online.
    struct Attempt: Sendable, Equatable {
        /// Resumed to abandon the attempt: the manager then cancels the connection.
        let abandon: WaiterToken
        /// The backoff before the next attempt if this one fails before it is online.
        let failureDelay: Duration
    }

    /// The wait before the next attempt.
    struct Backoff: Sendable, Equatable {
        /// Resumed to end the wait early, when a stop is requested.
        let interrupt: WaiterToken
        /// The backoff after the next attempt, if that one fails before it is online.
        let nextDelay: Duration
    }

    /// How a running manager stops.
    enum Stop: Sendable {
        /// Before online: the attempt (or the wait for the next one) is given up.
        case abandoning
        /// Online: the send loop takes its final batch. Publications and subscriptions still go
        /// directly meanwhile.
        case draining(ConnectedSession<Connection>)
        /// The final batch is taken: it is sent, then the unjoin, then the connection closes.
        /// Publications are queued (and reported as unsent when `run()` ends).
        case unjoining
    }

    private(set) var phase: Phase = .idle(stopRequested: false)
    var routing = RoutingTable<Receiver>()
    private(set) var outbox: BoundedQueue<Publication>
    /// Publishers parked by a full outbox while online (``FullOutboxPolicy/wait(_:)``): resumed when
    /// the send loop takes the outbox, or when the connection or the run ends.
    private(set) var roomWaiters: [WaiterToken] = []
    let initialReconnectDelay: Duration
    let maximumReconnectDelay: Duration
    private var nextClaim: UInt64 = 0

    /// How many released response subscriptions may wait for a batch before the send loop is woken.
    static var deferredUnsubscribeBatch: Int { 16 }

    init(outboxCapacity: Int, initialReconnectDelay: Duration, maximumReconnectDelay: Duration) {
        self.outbox = BoundedQueue(capacity: outboxCapacity)
        self.initialReconnectDelay = initialReconnectDelay
        self.maximumReconnectDelay = maximumReconnectDelay
    }

    /// `.online` while online and while stopping from online.
    var communicationState: CommunicationState {
        switch self.phase {
        case .online, .stopping(.draining), .stopping(.unjoining): .online
        default: .offline
        }
    }

    var isRunning: Bool {
        if case .idle = self.phase { return false }
        return true
    }

    /// Whether a subscription is queued for the send loop.
    var hasQueuedSubscription: Bool { self.session?.control.hasSubscribe ?? false }

    /// The session of the current connection, once it accepts control commands.
    var session: ConnectedSession<Connection>? {
        switch self.phase {
        case .joining(_, let session), .online(let session), .stopping(.draining(let session)): session
        default: nil
        }
    }

    // MARK: Lifecycle events

    /// What `run()` does when it starts.
    enum StartAction: Sendable, Equatable {
        /// Open a connection; abandon it when the attempt's token is resumed.
        case connect
        /// Refuse: `run()` is running already.
        case alreadyRunning
        /// A stop requested before `run()`: end the run at once (``runEnded()``).
        case endRun
    }

    /// `run()` starts; `abandon` is the first attempt's token (see ``Attempt/abandon``).
    mutating func start(abandon: WaiterToken) -> StartAction {
        switch self.phase {
        case .idle(stopRequested: false):
            self.phase = .connecting(Attempt(abandon: abandon, failureDelay: self.initialReconnectDelay))
            return .connect
        case .idle(stopRequested: true):
            self.phase = .stopping(.abandoning)
            return .endRun
        default:
            return .alreadyRunning
        }
    }

    /// What to do with a connection that just opened, or with the next step of the initial subscribe.
    enum ConnectedAction: Sendable, Equatable {
        /// Subscribe these filters, in one call, then report ``initialSubscriptionsSent()``.
        case subscribe([TopicFilter])
        /// Publish the join, then report ``joinSent()``.
        case join
        /// A stop came first: give up the connection (close it abruptly).
        case abandon
    }

    /// The transport opened `connection`: subscribe every needed filter.
    mutating func connected(_ connection: Connection) -> ConnectedAction {
        switch self.phase {
        case .connecting(let attempt):
            self.phase = .subscribing(attempt, connection: connection)
            return .subscribe(self.routing.connected())
        default:
            return .abandon
        }
    }

    /// The filters of the last ``ConnectedAction/subscribe(_:)`` are subscribed. Observations added
    /// meanwhile are subscribed next; once none is missing, the connection accepts control commands
    /// and the join goes out.
    mutating func initialSubscriptionsSent() -> ConnectedAction {
        guard case .subscribing(let attempt, let connection) = self.phase else { return .abandon }
        let missing = self.routing.markNeededSubscribed()
        guard missing.isEmpty else { return .subscribe(missing) }
        self.phase = .joining(attempt, ConnectedSession(connection: connection))
        return .join
    }

    /// What to do once the join is out.
    enum JoinedAction: Sendable, Equatable {
        /// Online: report the state and start the send loop.
        case online
        /// A stop came first: give up the connection (close it abruptly; its last will undoes the join).
        case abandon
    }

    /// The join is published: the manager is online. A stop requested before this abandons the
    /// connection; one requested after it stops gracefully.
    mutating func joinSent() -> JoinedAction {
        guard case .joining(_, let session) = self.phase else { return .abandon }
        self.phase = .online(session)
        return .online
    }

    /// What ``stopRequested()`` asks for.
    enum StopAction: Sendable, Equatable {
        /// Nothing: not running (the next `run()` returns at once) or stopping already.
        case none
        /// Abandon the attempt (resume its token) and end the waits of its queued commands.
        case abandonAttempt(WaiterToken, releasing: [WaiterToken])
        /// End the wait for the next attempt.
        case interruptBackoff(WaiterToken)
        /// Let the send loop send its final batch: resume its token if it is parked.
        case drain(wake: WaiterToken?)
    }

    /// `finish()`: stop gracefully once online, abandon anything before.
    mutating func stopRequested() -> StopAction {
        switch self.phase {
        case .idle:
            self.phase = .idle(stopRequested: true)
            return .none
        case .connecting(let attempt), .subscribing(let attempt, _):
            self.phase = .stopping(.abandoning)
            return .abandonAttempt(attempt.abandon, releasing: [])
        case .joining(let attempt, let session):
            self.phase = .stopping(.abandoning)
            return .abandonAttempt(attempt.abandon, releasing: session.waiters)
        case .online(var session):
            let wake = session.wakeSendLoop()
            self.phase = .stopping(.draining(session))
            return .drain(wake: wake)
        case .reconnectWait(let backoff):
            self.phase = .stopping(.abandoning)
            return .interruptBackoff(backoff.interrupt)
        case .stopping:
            return .none
        case .modifying:
            preconditionFailure("stopRequested() while modifying")
        }
    }

    /// What to do once a connection ended, or could not be opened.
    enum EndedAction: Sendable, Equatable {
        /// Wait `delay` (unless the token is resumed first), then report ``backoffElapsed(abandon:)``;
        /// end the waits of the connection's commands and pending subscriptions first.
        case reconnect(after: Duration, releasing: [WaiterToken])
        /// Stopping: end the run (``runEnded()``).
        case endRun
    }

    /// The connection was lost or could not be opened; `interrupt` ends the backoff early (see
    /// ``Backoff/interrupt``). Commands not sent on it die with it: the next connection subscribes
    /// every observed filter, and nothing is subscribed to unsubscribe; their observations return now,
    /// as one made offline does, instead of waiting for a connection that may be long in coming.
    mutating func connectionEnded(interrupt: WaiterToken) -> EndedAction {
        let delay: Duration
        var releasing: [WaiterToken] = []
        switch self.phase {
        case .connecting(let attempt), .subscribing(let attempt, _):
            delay = attempt.failureDelay
        case .joining(let attempt, let session):
            delay = attempt.failureDelay
            releasing = session.waiters
        case .online(let session):
            delay = self.initialReconnectDelay
            releasing = session.waiters
        case .idle, .reconnectWait, .stopping:
            return .endRun
        case .modifying:
            preconditionFailure("connectionEnded() while modifying")
        }
        releasing += self.takeRoomWaiters()
        self.routing.disconnected()
        self.phase = .reconnectWait(
            Backoff(interrupt: interrupt, nextDelay: min(delay * 2, self.maximumReconnectDelay))
        )
        return .reconnect(after: delay, releasing: releasing)
    }

    /// What to do when the backoff is over.
    enum BackoffAction: Sendable, Equatable {
        /// Open the next connection.
        case connect
        /// Stopping: end the run (``runEnded()``).
        case endRun
    }

    /// The backoff elapsed (or was interrupted); `abandon` is the next attempt's token.
    mutating func backoffElapsed(abandon: WaiterToken) -> BackoffAction {
        guard case .reconnectWait(let backoff) = self.phase else { return .endRun }
        self.phase = .connecting(Attempt(abandon: abandon, failureDelay: backoff.nextDelay))
        return .connect
    }

    /// What is left to finish when `run()` ends.
    struct RunEnd: Sendable {
        /// Every wait still held, to end.
        var waiters: [WaiterToken]
        /// Every observer: their streams finish.
        var entries: [RoutingTable<Receiver>.Entry]
        /// Publications never sent, to report.
        var unsent: [Publication]
    }

    /// `run()` ends, from any phase: back to idle, with no observer and nothing queued.
    mutating func runEnded() -> RunEnd {
        let waiters = (self.session?.waiters ?? []) + self.takeRoomWaiters()
        self.phase = .idle(stopRequested: false)
        self.routing.disconnected()
        return RunEnd(waiters: waiters, entries: self.routing.removeAll(), unsent: self.outbox.removeAll())
    }

    /// Stopping from online, the send loop takes its final batch: the session ends, and the phase
    /// goes on to unjoining. Returns the session's queued commands and the waiters of its pending
    /// subscriptions, or `nil` when not draining.
    mutating func endDrainingSession() -> (commands: [ControlCommand], releasing: [WaiterToken])? {
        guard case .stopping(.draining(var session)) = self.phase else { return nil }
        self.phase = .stopping(.unjoining)
        // Held releases too: with a persistent session the broker would keep them.
        let commands = session.heldReleaseCommands(returningClaimsTo: &self.routing) + session.control.takeAll()
        return (commands, session.subscribing.values.flatMap(\.waiters))
    }

    // MARK: In-place changes

    /// Changes the session of the current connection in place, without copying it: once it accepts
    /// control commands, or with `onlineOnly` only while online (stopping from online included).
    /// Returns `nil` without calling `body` when there is no such session.
    mutating func withSession<Result>(
        onlineOnly: Bool = false,
        _ body: (inout ConnectedSession<Connection>, inout RoutingTable<Receiver>) -> Result
    ) -> Result? {
        // The session is taken out of the phase, and the phase set to `.modifying`, before `body`
        // runs: a match on `self.phase` works on a copy that lives until the match ends, so changing
        // the session inside the match would find its storage shared and copy it.
        var taken: (session: ConnectedSession<Connection>, place: SessionPlace)?
        switch self.phase {
        case .joining(let attempt, let session): taken = onlineOnly ? nil : (session, .joining(attempt))
        case .online(let session): taken = (session, .online)
        case .stopping(.draining(let session)): taken = (session, .draining)
        default: taken = nil
        }
        guard case (var session, let place)? = consume taken else { return nil }
        self.phase = .modifying
        defer {
            switch place {
            case .joining(let attempt): self.phase = .joining(attempt, session)
            case .online: self.phase = .online(session)
            case .draining: self.phase = .stopping(.draining(session))
            }
        }
        return body(&session, &self.routing)
    }

    /// Which phase a session was taken from by ``withSession(onlineOnly:_:)``, to put it back.
    private enum SessionPlace {
        case joining(Attempt)
        case online
        case draining
    }

    /// A fresh claim id.
    mutating func makeClaim() -> SubscriptionClaim {
        self.nextClaim += 1
        return SubscriptionClaim(rawValue: self.nextClaim)
    }

    /// Appends to the outbox, dropping the oldest publication if it is full; returns the dropped one.
    mutating func appendToOutbox(_ publication: Publication) -> Publication? {
        self.outbox.append(publication)
    }

    /// Appends to the outbox even when it is full (``FullOutboxPolicy/exceed``).
    mutating func appendToOutboxBeyondCapacity(_ publication: Publication) {
        self.outbox.appendBeyondCapacity(publication)
    }

    /// Parks a publisher until the outbox has room (``FullOutboxPolicy/wait(_:)``).
    mutating func waitForRoom(_ waiter: WaiterToken) {
        self.roomWaiters.append(waiter)
    }

    /// Takes the publishers parked by a full outbox, to resume: the outbox was taken, or the
    /// connection or the run ended. They try again, and are queued or parked again as it stands then.
    mutating func takeRoomWaiters() -> [WaiterToken] {
        guard !self.roomWaiters.isEmpty else { return [] }
        defer { self.roomWaiters = [] }
        return self.roomWaiters
    }

    /// Puts publications back at the front of the outbox, in order; returns those dropped to make room.
    mutating func prependToOutbox(_ publications: [Publication]) -> [Publication] {
        self.outbox.prepend(publications)
    }

    /// Takes every queued publication.
    mutating func takeOutbox() -> [Publication] {
        self.outbox.removeAll()
    }

    /// Withdraws the publication of a request whose caller gave up (its first routing entry is
    /// `request`), if it is still queued.
    mutating func withdrawRequest(_ request: ObserverID) {
        guard !self.outbox.isEmpty else { return }
        self.outbox.removeAll { $0.request == request }
    }
}

extension ManagerStateMachine.Phase: Equatable where Connection: Equatable {}
extension ManagerStateMachine.Stop: Equatable where Connection: Equatable {}
