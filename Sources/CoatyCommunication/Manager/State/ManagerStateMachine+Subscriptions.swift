import CoatyCore

/// Subscriptions: claims made from the observing task or by the send loop, their waiters, and the
/// release of filters no observer needs any more.
extension ManagerStateMachine {
    /// What ``claimDirectSubscription(of:forResponses:)`` decided.
    enum DirectSubscription: Sendable {
        /// The caller subscribes the filter on this connection from its own task, then reports
        /// ``subscriptionEnded(_:claim:)`` (an observation's claim), or ``releaseSubscribeClaims(_:)``
        /// if the subscription failed.
        case claimed(Connection, SubscriptionClaim?)
        /// Nothing to do: the filter is subscribed, or being subscribed, already.
        case alreadyClaimed
        /// The subscription has to be queued for the send loop (``queueSubscription(_:waiter:)``).
        case unavailable
    }

    /// Claims the subscription of an observed `filter` for the calling task, while online and the
    /// connection may take it directly (``ConnectedSession/allowsDirectSubscription(of:)``).
    ///
    /// An observation's claim is registered as pending, so another observation of the filter waits
    /// for it (``waitForPendingSubscription(of:waiter:)``). A request's response filter
    /// (`forResponses`) is not: only requests use it, and they count a subscription handed to the
    /// connection as in place.
    mutating func claimDirectSubscription(of filter: TopicFilter, forResponses: Bool) -> DirectSubscription {
        let claim = forResponses ? nil : self.makeClaim()
        let decision = self.withSession(onlineOnly: true) { session, routing -> DirectSubscription in
            guard session.allowsDirectSubscription(of: filter) else { return .unavailable }
            guard routing.claimSubscribe(filter) else { return .alreadyClaimed }
            if let claim { session.subscribing[filter] = PendingSubscription(claim: claim) }
            return .claimed(session.connection, claim)
        }
        return decision ?? .unavailable
    }

    /// Undoes the claims of subscriptions that failed, so they are claimed again.
    mutating func releaseSubscribeClaims(_ filters: some Sequence<TopicFilter>) {
        for filter in filters { self.routing.releaseSubscribeClaim(filter) }
    }

    /// The subscription of `filter` claimed as `claim` ended, done or failed: returns the
    /// observations waiting for it, to resume. A claim whose connection is gone finds nothing: its
    /// waiters were resumed when the connection ended.
    mutating func subscriptionEnded(_ filter: TopicFilter, claim: SubscriptionClaim) -> [WaiterToken] {
        let waiters = self.withSession { session, _ -> [WaiterToken] in
            guard session.subscribing[filter]?.claim == claim else { return [] }
            return session.subscribing.removeValue(forKey: filter)?.waiters ?? []
        }
        return waiters ?? []
    }

    /// Registers `waiter` for the pending subscription of `filter`, if there is one; returns
    /// whether it was registered (then the caller waits for it).
    mutating func waitForPendingSubscription(of filter: TopicFilter, waiter: WaiterToken) -> Bool {
        let registered = self.withSession { session, _ -> Bool in
            guard session.subscribing[filter] != nil else { return false }
            session.subscribing[filter]?.waiters.append(waiter)
            return true
        }
        return registered ?? false
    }

    /// What ``queueSubscription(_:waiter:)`` did.
    enum QueuedSubscription: Sendable, Equatable {
        /// Queued: wait for `waiter`, after resuming `wake` (the parked send loop) if given.
        case queued(wake: WaiterToken?)
        /// Not connected: the next connection subscribes the filter; nothing to wait for.
        case notConnected
    }

    /// Queues the subscription of `filter` for the send loop, which resumes `waiter` once it is in
    /// place (or the connection ends).
    mutating func queueSubscription(_ filter: TopicFilter, waiter: WaiterToken) -> QueuedSubscription {
        let wake = self.withSession { session, _ -> WaiterToken? in
            session.control.append(.subscribe(filter, waiter))
            return session.wakeSendLoop()
        }
        guard let wake else { return .notConnected }
        return .queued(wake: wake)
    }

    /// How the send loop may go on with a queued subscription.
    enum QueuedClaim: Sendable, Equatable {
        /// Subscribe it, then report ``subscriptionEnded(_:claim:)``.
        case claimed(SubscriptionClaim)
        /// Nothing to subscribe: done already, or not needed any more.
        case alreadyClaimed
        /// A finished request is releasing the filter from its own task: wait for that to be handed
        /// over (``waitForDirectRelease(of:waiter:)``), so that the release does not undo the
        /// subscription, then claim again.
        case blockedByRelease
    }

    /// The send loop claims the subscription of a queued `filter`.
    mutating func claimQueuedSubscription(_ filter: TopicFilter) -> QueuedClaim {
        let claim = self.makeClaim()
        let decision = self.withSession(onlineOnly: true) { session, routing -> QueuedClaim in
            if session.directReleases.contains(filter) { return .blockedByRelease }
            guard routing.claimSubscribe(filter) else { return .alreadyClaimed }
            session.subscribing[filter] = PendingSubscription(claim: claim)
            return .claimed(claim)
        }
        return decision ?? .alreadyClaimed
    }

    /// Registers the send loop's `waiter` for the end of the direct release of `filter`; returns
    /// whether it was registered (`false`: the release is over, claim again).
    mutating func waitForDirectRelease(of filter: TopicFilter, waiter: WaiterToken) -> Bool {
        let registered = self.withSession(onlineOnly: true) { session, _ -> Bool in
            guard session.directReleases.contains(filter), case .sending(var batch) = session.sendLoop else {
                return false
            }
            batch.releaseWaiter = (filter, waiter)
            session.sendLoop = .sending(batch)
            return true
        }
        return registered ?? false
    }

    /// What removing observers leaves to do.
    struct Removal: Sendable {
        /// Filters to unsubscribe from the calling task, without waiting, then report
        /// ``directReleaseEnded(_:released:)``.
        var directRelease: (connection: Connection, filters: [TopicFilter])?
        /// The parked send loop, to wake for the unsubscriptions queued.
        var wake: WaiterToken?
        /// Whether to schedule the flush of held releases: after the manager's hold time (20 ms),
        /// release what ``takeHeldReleases()`` returns.
        var schedulesReleaseFlush = false
    }

    /// Removes routing entries and releases the subscriptions that are no longer needed: queued for
    /// the send loop, or with `deferringUnsubscribe` (a finished request's response filters) claimed
    /// for a direct release when online and the filter is not busy.
    ///
    /// A direct release is held (``ConnectedSession/heldReleases``): its UNSUBSCRIBE goes out with the
    /// next request's write (``registerRequest(_:receiver:)`` takes it), or when the flush scheduled
    /// for it runs, a hold time (20 ms) after the first release held, whichever comes first; once
    /// ``deferredUnsubscribeBatch`` are held, they are released at once. Sending it on its own right
    /// away costs a system call and a wake-up of the broker and then of this client for the UNSUBACK,
    /// a large part of a short round trip. Holding it is safe: the filter carries a correlation id no
    /// one else uses, late responses find no observer, and the filter stays claimed for release, so a
    /// request reusing the id subscribes it only after the release.
    ///
    /// A queued deferred unsubscription (the connection could not take it directly) does not wake the
    /// send loop until ``deferredUnsubscribeBatch`` have piled up or something else wakes it.
    /// With `deferringUnsubscribe` the request's publication is also withdrawn if it is still queued
    /// (``withdrawRequest(_:)``): its caller gave up, so no callee should act on it.
    mutating func removeObservers(_ ids: [ObserverID], deferringUnsubscribe deferring: Bool) -> Removal {
        // A finished request's caller gave up: its publication, if still queued, is withdrawn.
        if deferring, let request = ids.first { self.withdrawRequest(request) }
        var releases = InlineList<TopicFilter>()
        for id in ids {
            guard case .unsubscribe(let filter) = self.routing.remove(id) else { continue }
            releases.append(filter)
        }
        guard !releases.isEmpty else { return Removal() }
        let isOnline = self.communicationState == .online
        let removal = self.withSession { session, routing -> Removal in
            var removal = Removal()
            var queued = false
            for filter in releases {
                if deferring, isOnline, session.allowsDirectSubscription(of: filter), routing.claimUnsubscribe(filter) {
                    // Marked, so the same filter is not subscribed again before it is released.
                    session.directReleases.append(filter)
                    session.heldReleases.filters.append(filter)
                } else {
                    session.control.append(.unsubscribe(filter))
                    queued = true
                }
            }
            if session.heldReleases.filters.count >= Self.deferredUnsubscribeBatch {
                removal.directRelease = (session.connection, session.heldReleases.filters)
                session.heldReleases.filters = []
            } else if !session.heldReleases.filters.isEmpty, !session.heldReleases.flushScheduled {
                session.heldReleases.flushScheduled = true
                removal.schedulesReleaseFlush = true
            }
            if queued, !deferring || session.control.count >= Self.deferredUnsubscribeBatch {
                removal.wake = session.wakeSendLoop()
            }
            return removal
        }
        return removal ?? Removal()
    }

    /// The scheduled flush runs: takes the held releases to unsubscribe from the calling task, then
    /// report ``directReleaseEnded(_:released:)``. The next release held schedules a new flush.
    mutating func takeHeldReleases() -> (connection: Connection, filters: [TopicFilter])? {
        let taken = self.withSession { session, _ -> (connection: Connection, filters: [TopicFilter])? in
            session.heldReleases.flushScheduled = false
            guard !session.heldReleases.filters.isEmpty else { return nil }
            defer { session.heldReleases.filters = [] }
            return (session.connection, session.heldReleases.filters)
        }
        return taken ?? nil
    }

    /// The direct release of `filters` is over: handed to the connection (`released`) or not, in
    /// which case they are queued for the send loop. Returns the waiters to resume: the send loop
    /// waiting for one of them (``QueuedClaim/blockedByRelease``), or parked with a full batch.
    /// A lost connection reset the subscriptions: a release begun on it has nothing left to release.
    mutating func directReleaseEnded(_ filters: [TopicFilter], released: Bool) -> [WaiterToken] {
        let tokens = self.withSession(onlineOnly: true) { session, routing -> [WaiterToken] in
            var tokens: [WaiterToken] = []
            // Only this connection's releases: one that began on a lost connection has nothing left
            // to release on this one, and must not mark its filter subscribed here.
            var own = InlineList<TopicFilter>()
            for filter in filters where session.directReleases.remove(filter) { own.append(filter) }
            if case .sending(var batch) = session.sendLoop, let waiter = batch.releaseWaiter,
                !session.directReleases.contains(waiter.filter)
            {
                batch.releaseWaiter = nil
                session.sendLoop = .sending(batch)
                tokens.append(waiter.token)
            }
            guard !released else { return tokens }
            for filter in own {
                routing.returnUnsubscribeClaim(filter)
                session.control.append(.unsubscribe(filter))
            }
            if session.control.count >= Self.deferredUnsubscribeBatch, let wake = session.wakeSendLoop() {
                tokens.append(wake)
            }
            return tokens
        }
        return tokens ?? []
    }
}

extension ManagerStateMachine.DirectSubscription: Equatable where Connection: Equatable {}
