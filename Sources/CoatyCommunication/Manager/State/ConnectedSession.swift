import CoatyCore

/// What a ``ManagerStateMachine`` knows about one open connection from the moment it accepts control
/// commands (the join is going out) until it is lost or closed. Carried by the phases that have it:
/// a lost connection takes all of it along, so nothing of one connection can leak into the next.
struct ConnectedSession<Connection: Sendable>: Sendable {
    let connection: Connection
    /// The commands waiting for the send loop.
    var control = ControlQueue()
    /// The filters whose subscription was claimed and waits for the connection's confirmation, with
    /// the observations waiting for it. The routing table counts them as subscribed, so another
    /// observation of the same filter waits here instead of returning before the subscription is in
    /// place.
    var subscribing: [TopicFilter: PendingSubscription] = [:]
    /// The filters a finished request is unsubscribing from its own task, between its claim and the
    /// transport call: neither a direct nor a queued subscription of them may start meanwhile, or the
    /// release, handed over after it, would undo it.
    var directReleases: Set<TopicFilter> = []
    var sendLoop = SendLoop.running

    init(connection: Connection) {
        self.connection = connection
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

extension ConnectedSession: Equatable where Connection: Equatable {}
