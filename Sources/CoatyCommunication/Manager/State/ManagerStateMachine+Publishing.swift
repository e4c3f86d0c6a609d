import CoatyCore
import CoatyTransport

/// Publications and the send loop: the outbox, direct publishing from the calling task, and the
/// batches the send loop takes.
extension ManagerStateMachine {
    /// The connection on which the calling task may publish directly, or `nil` when the publication
    /// has to be queued for the send loop.
    ///
    /// Direct publishing is allowed only while online with no publication queued or in the send loop's
    /// hands: then nothing published earlier is still on its way, so every task's publications keep
    /// the order it made them in.
    var directPublishConnection: Connection? {
        guard self.outbox.isEmpty else { return nil }
        switch self.phase {
        case .online(let session), .stopping(.draining(let session)):
            return session.isPublishing ? nil : session.connection
        default:
            return nil
        }
    }

    /// What ``enqueue(_:whenFull:)`` did and leaves to do.
    struct Enqueued: Sendable, Equatable {
        /// Whether the publication was queued.
        var outcome: Outcome
        /// The publication dropped from the full outbox (the oldest) while offline, to report.
        var dropped: Publication?
        /// The parked send loop, to wake.
        var wake: WaiterToken?

        enum Outcome: Sendable, Equatable {
            /// Queued for the send loop.
            case queued
            /// Not queued: the outbox is full while online and the publisher waits for room
            /// (``FullOutboxPolicy/wait(_:)``; its token is resumed when it may try again).
            case waiting
            /// Not queued: the outbox is full while online (``FullOutboxPolicy/refuse``).
            case refused
        }
    }

    /// Whether a send loop drains the outbox: online, or stopping before its final batch.
    var hasSendLoop: Bool {
        switch self.phase {
        case .online, .stopping(.draining): true
        default: false
        }
    }

    /// Queues a publication for the send loop. While online nothing is dropped: a full outbox
    /// (``outboxCapacity`` publications) parks, refuses or exceeds by `policy`. While offline the
    /// outbox keeps its bound by dropping its oldest publication.
    mutating func enqueue(_ publication: Publication, whenFull policy: FullOutboxPolicy = .exceed) -> Enqueued {
        var dropped: Publication?
        if self.outbox.count < self.outbox.capacity || !self.hasSendLoop {
            dropped = self.appendToOutbox(publication)
        } else {
            switch policy {
            case .wait(let waiter):
                self.waitForRoom(waiter)
                return Enqueued(outcome: .waiting)
            case .refuse:
                return Enqueued(outcome: .refused)
            case .exceed:
                self.appendToOutboxBeyondCapacity(publication)
            }
        }
        let wake = self.withSession(onlineOnly: true) { session, _ in session.wakeSendLoop() }
        return Enqueued(outcome: .queued, dropped: dropped, wake: wake ?? nil)
    }

    /// The outbox's bound.
    var outboxCapacity: Int { self.outbox.capacity }

    /// What the send loop does next.
    enum SendStep: Sendable, Equatable {
        /// Perform the commands in order, then publish the messages, then report
        /// ``batchCommandsDone()`` and ``batchSent()`` as each part is done. A final batch (a stop was
        /// requested) ends the session: resume `releasing` (observations waiting for subscriptions
        /// claimed directly), send the batch, and return.
        case batch(commands: [ControlCommand], publications: [Publication], final: [WaiterToken]?)
        /// Nothing to do: ``park(_:)``.
        case idle
        /// The connection has no session: return.
        case finished
    }

    /// The send loop takes everything queued.
    mutating func takeBatch() -> SendStep {
        let isFinal: Bool
        switch self.phase {
        case .online: isFinal = false
        case .stopping(.draining): isFinal = true
        default: return .finished
        }
        let hasMessages = !self.outbox.isEmpty
        let messages = hasMessages ? self.takeOutbox() : []
        if isFinal, let (commands, releasing) = self.endDrainingSession() {
            return .batch(commands: commands, publications: messages, final: releasing)
        }
        let step = self.withSession(onlineOnly: true) { session, routing -> SendStep in
            guard !session.control.isEmpty || hasMessages else { return .idle }
            // Held releases go with this write too.
            let held = session.heldReleaseCommands(returningClaimsTo: &routing)
            let commands = held.isEmpty ? session.control.takeAll() : held + session.control.takeAll()
            session.sendLoop = .sending(
                SendLoop.Batch(commandFilters: Set(commands.map(\.filter)), isPublishing: hasMessages)
            )
            return .batch(commands: commands, publications: messages, final: nil)
        }
        return step ?? .finished
    }

    /// The send loop found nothing to do: it parks until `waiter` is resumed, unless something came
    /// in since it looked (then `false`: take the next batch instead).
    mutating func park(_ waiter: WaiterToken) -> Bool {
        guard case .online = self.phase, self.outbox.isEmpty else { return false }
        let parked = self.withSession(onlineOnly: true) { session, _ -> Bool in
            guard session.control.isEmpty else { return false }
            session.sendLoop = .parked(waiter)
            return true
        }
        return parked ?? false
    }

    /// The commands of the send loop's batch are done: their filters may be subscribed directly again.
    mutating func batchCommandsDone() {
        _ = self.withSession(onlineOnly: true) { session, _ in
            guard case .sending(var batch) = session.sendLoop else { return }
            batch.commandFilters = []
            session.sendLoop = .sending(batch)
        }
    }

    /// The send loop's batch is done: publications may go directly again.
    mutating func batchSent() {
        _ = self.withSession(onlineOnly: true) { session, _ in session.sendLoop = .running }
    }

    /// A publication of the send loop failed with the connection: `unsent` (the failed one, with the
    /// messages of it not sent, and everything after it) goes back to the front of the outbox, in
    /// order, so the next connection sends it; requests whose callers gave up meanwhile are withdrawn.
    /// Returns the publications dropped to make room.
    mutating func requeue(_ unsent: [Publication]) -> [Publication] {
        self.prependToOutbox(unsent.filter { $0.request.map { self.routing.entries[$0] != nil } ?? true })
    }

    /// What ``registerRequest(_:receiver:)`` registered under the lock.
    struct RequestRegistration: Sendable {
        let ids: [ObserverID]
        /// Response filters claimed for subscribing on `subscribeConnection` from the calling task.
        var claimed: [TopicFilter] = []
        var subscribeConnection: Connection?
        /// Response filters that have to wait for the send loop.
        var queued: [TopicFilter] = []
        /// The connection to publish the request on from the calling task, if it may.
        let publishConnection: Connection?
        /// Held releases of finished requests (``ConnectedSession/heldReleases``), taken to unsubscribe
        /// on `releaseConnection` from the calling task, after the request is handed over, then report
        /// ``directReleaseEnded(_:released:)``.
        var releases: [TopicFilter] = []
        var releaseConnection: Connection?
    }

    /// A request's observers of its response `filters`, their subscriptions claimed, and the connection
    /// to publish the request on: all decided at once, so that a request while online and idle takes
    /// one lock.
    mutating func registerRequest(_ filters: [TopicFilter], receiver: Receiver) -> RequestRegistration {
        let added = self.routing.add(filters, kind: .coaty, receiver: receiver)
        var registration = RequestRegistration(ids: added.ids, publishConnection: self.directPublishConnection)
        _ = self.withSession { session, _ in
            guard !session.heldReleases.filters.isEmpty else { return }
            registration.releases = session.heldReleases.filters
            registration.releaseConnection = session.connection
            session.heldReleases.filters = []
        }
        for filter in added.toSubscribe {
            switch self.claimDirectSubscription(of: filter, forResponses: true) {
            case .claimed(let connection, _):
                registration.claimed.append(filter)
                registration.subscribeConnection = connection
            case .alreadyClaimed:
                break  // a reused correlation id, already being subscribed
            case .unavailable:
                registration.queued.append(filter)
            }
        }
        return registration
    }
}
