import CoatyCore

/// What a ``ManagerStateMachine`` knows about one open connection from the moment it accepts control
/// commands (the join is going out) until it is lost or closed. Carried by the phases that have it:
/// a lost connection takes all of it along, so nothing of one connection can leak into the next.
struct ConnectedSession<Connection: Sendable>: Sendable {
    /// The session's fields, copied on write. Matching a phase that carries a session copies it (the
    /// hot paths read the phase for every request and release), and a copy is then one retain instead
    /// of one per field; ``ManagerStateMachine/withSession(onlineOnly:_:)`` keeps the storage unique,
    /// so changing it in place copies nothing.
    private final class Storage: @unchecked Sendable {
        // Unchecked: a storage is changed only while uniquely referenced (`makeUnique()`), so a shared
        // one is never written.
        let connection: Connection
        var control: ControlQueue
        var subscribing: [TopicFilter: PendingSubscription]
        var directReleases: InlineList<TopicFilter>
        var heldReleases: HeldReleases
        var sendLoop: SendLoop

        init(
            connection: Connection,
            control: ControlQueue = ControlQueue(),
            subscribing: [TopicFilter: PendingSubscription] = [:],
            directReleases: InlineList<TopicFilter> = InlineList(),
            heldReleases: HeldReleases = HeldReleases(),
            sendLoop: SendLoop = .running
        ) {
            self.connection = connection
            self.control = control
            self.subscribing = subscribing
            self.directReleases = directReleases
            self.heldReleases = heldReleases
            self.sendLoop = sendLoop
        }

        func copy() -> Storage {
            Storage(
                connection: self.connection,
                control: self.control,
                subscribing: self.subscribing,
                directReleases: self.directReleases,
                heldReleases: self.heldReleases,
                sendLoop: self.sendLoop
            )
        }
    }

    private var storage: Storage

    init(connection: Connection) {
        self.storage = Storage(connection: connection)
    }

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&self.storage) { self.storage = self.storage.copy() }
    }

    var connection: Connection { self.storage.connection }

    /// The commands waiting for the send loop.
    var control: ControlQueue {
        get { self.storage.control }
        _modify {
            self.makeUnique()
            yield &self.storage.control
        }
    }

    /// The filters whose subscription was claimed and waits for the connection's confirmation, with
    /// the observations waiting for it. The routing table counts them as subscribed, so another
    /// observation of the same filter waits here instead of returning before the subscription is in
    /// place.
    var subscribing: [TopicFilter: PendingSubscription] {
        get { self.storage.subscribing }
        _modify {
            self.makeUnique()
            yield &self.storage.subscribing
        }
    }

    /// The filters a finished request is unsubscribing from its own task, between its claim and the
    /// transport call: neither a direct nor a queued subscription of them may start meanwhile, or the
    /// release, handed over after it, would undo it.
    var directReleases: InlineList<TopicFilter> {
        get { self.storage.directReleases }
        _modify {
            self.makeUnique()
            yield &self.storage.directReleases
        }
    }

    /// Finished requests' response filters claimed for a direct release (so also in
    /// ``directReleases``) that wait to go out with the next request's write, or at the latest when
    /// the release flush runs (see ``ManagerStateMachine/holdRelease(_:)``).
    var heldReleases: HeldReleases {
        get { self.storage.heldReleases }
        _modify {
            self.makeUnique()
            yield &self.storage.heldReleases
        }
    }

    var sendLoop: SendLoop {
        get { self.storage.sendLoop }
        _modify {
            self.makeUnique()
            yield &self.storage.sendLoop
        }
    }

    /// Takes the held releases as unsubscribe commands for the send loop, to go ahead of the commands
    /// queued: a queued subscription of the same filter (a reused correlation id) must follow its
    /// release. Their claims go back to `routing`, where the send loop claims them again.
    mutating func heldReleaseCommands<Receiver>(returningClaimsTo routing: inout RoutingTable<Receiver>)
        -> [ControlCommand]
    {
        guard !self.heldReleases.filters.isEmpty else { return [] }
        let filters = self.heldReleases.filters
        self.heldReleases.filters = []
        for filter in filters {
            _ = self.directReleases.remove(filter)
            routing.returnUnsubscribeClaim(filter)
        }
        return filters.map { .unsubscribe($0) }
    }

    /// Wakes the send loop if it is parked: returns its token to resume.
    mutating func wakeSendLoop() -> WaiterToken? {
        guard case .parked(let token) = self.sendLoop else { return nil }
        self.sendLoop = .running
        return token
    }

    /// Whether a subscription of `filter` may go to the connection from the calling task: no
    /// subscription is queued (a queued one is confirmed to its waiter in order), and no command for
    /// the same filter is in the send loop's hands or released directly, so the commands for one filter
    /// reach the connection in the order they were decided. Queued unsubscriptions of other filters,
    /// which every finished request leaves behind, do not hold it up.
    func allowsDirectSubscription(of filter: TopicFilter) -> Bool {
        guard !self.control.hasSubscribe else { return false }
        if case .sending(let batch) = self.sendLoop, !batch.commandFilters.isEmpty,
            batch.commandFilters.contains(filter)
        {
            return false
        }
        return self.directReleases.isEmpty || !self.directReleases.contains(filter)
    }

    /// Whether the send loop holds publications it took and has not sent.
    var isPublishing: Bool {
        if case .sending(let batch) = self.sendLoop { return batch.isPublishing }
        return false
    }

    /// Every waiter this session holds: ending the session ends their waits.
    var waiters: [WaiterToken] {
        var waiters = self.control.commands.compactMap(\.waiter)
        for pending in self.subscribing.values { waiters += pending.waiters }
        switch self.sendLoop {
        case .parked(let token): waiters.append(token)
        case .sending(let batch): if let release = batch.releaseWaiter { waiters.append(release.token) }
        case .running: break
        }
        return waiters
    }
}

/// Response filters of finished requests whose UNSUBSCRIBE waits for a write to go out with.
struct HeldReleases: Sendable, Equatable {
    /// The filters, in the order their requests finished.
    var filters: [TopicFilter] = []
    /// Whether a flush is scheduled that will release whatever is still held when it runs.
    var flushScheduled = false
}

/// A subscription claimed for an observation and not confirmed yet.
struct PendingSubscription: Sendable, Equatable {
    /// Identifies the claim, so that only its claimant ends it.
    let claim: SubscriptionClaim
    /// The observations of the same filter waiting for it.
    var waiters: [WaiterToken] = []
}

/// Identifies one claimed subscription of a ``ManagerStateMachine``.
struct SubscriptionClaim: Hashable, Sendable {
    let rawValue: UInt64
}

/// What the send loop of a connection is doing.
enum SendLoop: Sendable, Equatable {
    /// Running, or about to start: holding nothing, not parked. It takes the next batch before it
    /// parks, so nothing queued meanwhile is missed.
    case running
    /// Parked until the token is resumed.
    case parked(WaiterToken)
    /// Working on a batch it took.
    case sending(Batch)

    /// A batch the send loop took and has not finished.
    struct Batch: Sendable, Equatable {
        /// The filters of the batch's control commands, until they are all done.
        var commandFilters: Set<TopicFilter>
        /// Whether the batch's publications are not all sent yet.
        var isPublishing: Bool
        /// The loop waits for a direct release of this filter to be handed over before it subscribes it.
        var releaseWaiter: (filter: TopicFilter, token: WaiterToken)?

        static func == (lhs: Batch, rhs: Batch) -> Bool {
            lhs.commandFilters == rhs.commandFilters && lhs.isPublishing == rhs.isPublishing
                && lhs.releaseWaiter?.filter == rhs.releaseWaiter?.filter
                && lhs.releaseWaiter?.token == rhs.releaseWaiter?.token
        }
    }
}

extension ConnectedSession: Equatable where Connection: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.connection == rhs.connection && lhs.control == rhs.control && lhs.subscribing == rhs.subscribing
            && lhs.directReleases == rhs.directReleases && lhs.heldReleases == rhs.heldReleases
            && lhs.sendLoop == rhs.sendLoop
    }
}
