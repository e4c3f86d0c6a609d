import CoatyCore
import CoatyTransport
import Synchronization

extension CommunicationManager {
    /// How many released response subscriptions may wait for a batch before the send loop is woken.
    static var deferredUnsubscribeBatch: Int {
        ManagerStateMachine<any TransportConnection, ObserverReceiver>.deferredUnsubscribeBatch
    }

    /// Sends control commands and queued publications until stopped (returns) or the connection fails
    /// (throws). Parks while there is nothing to do; the state machine names its token when work comes.
    func sendLoop(_ connection: any TransportConnection) async throws {
        while !Task.isCancelled {
            let (step, room) = self.state.withLock { ($0.machine.takeBatch(), $0.machine.takeRoomWaiters()) }
            self.resume(room)
            switch step {
            case .batch(let commands, let messages, let final):
                if let final { self.resume(final) }
                try await self.send(commands, then: messages, on: connection)
                if final != nil { return }
            case .idle:
                let waiter = self.waiters.makeToken()
                if self.state.withLock({ $0.machine.park(waiter) }) {
                    try await self.waiters.wait(waiter)
                } else {
                    self.waiters.discard(waiter)
                }
            case .finished:
                return
            }
        }
    }

    /// Performs one batch: the commands in order, then the publications.
    ///
    /// When the connection fails, the observations waiting for the commands not done yet are released
    /// (the reconnect subscribes every observed filter, as for an observation made offline), and the
    /// publications not sent go back to the outbox, in order, so the next connection sends them.
    private func send(
        _ commands: [ControlCommand],
        then messages: [Publication],
        on connection: any TransportConnection
    ) async throws {
        var unsubscribing: [TopicFilter] = []
        var pending = commands[...]
        do {
            while let command = pending.first {
                switch command {
                case .subscribe(let filter, let waiter):
                    try await self.unsubscribe(&unsubscribing, on: connection)
                    if let claim = try await self.claimQueuedSubscription(filter) {
                        defer {
                            self.resume(self.state.withLock { $0.machine.subscriptionEnded(filter, claim: claim) })
                        }
                        try await connection.subscribe(to: [filter])
                    }
                    pending.removeFirst()
                    if let waiter { self.resume(CollectionOfOne(waiter)) }
                case .unsubscribe(let filter):
                    if self.state.withLock({ $0.machine.routing.claimUnsubscribe(filter) }) {
                        unsubscribing.append(filter)
                    }
                    pending.removeFirst()
                }
            }
            try await self.unsubscribe(&unsubscribing, on: connection)
        } catch {
            self.resume(pending.compactMap(\.waiter))
            self.requeue(messages)
            throw error
        }
        if !commands.isEmpty { self.state.withLock { $0.machine.batchCommandsDone() } }
        for (index, publication) in messages.enumerated() {
            for (part, message) in publication.messages.enumerated() {
                do {
                    try await connection.publish(message)
                } catch {
                    var unsent = Array(messages[index...])
                    unsent[0].messages.removeFirst(part)
                    self.requeue(unsent)
                    throw error
                }
            }
        }
        self.state.withLock { $0.machine.batchSent() }
    }

    /// Claims a queued subscription; waits first while a finished request releases the same filter
    /// from its own task (only a reused correlation id gets here), so that the release does not undo
    /// the subscription. Returns `nil` when there is nothing to subscribe.
    private func claimQueuedSubscription(_ filter: TopicFilter) async throws -> SubscriptionClaim? {
        while true {
            switch self.state.withLock({ $0.machine.claimQueuedSubscription(filter) }) {
            case .claimed(let claim):
                return claim
            case .alreadyClaimed:
                return nil
            case .blockedByRelease:
                let waiter = self.waiters.makeToken()
                if self.state.withLock({ $0.machine.waitForDirectRelease(of: filter, waiter: waiter) }) {
                    try await self.waiters.wait(waiter)
                } else {
                    self.waiters.discard(waiter)
                }
            }
        }
    }

    /// Unsubscribes the collected filters in one request, keeping the order of control commands.
    private func unsubscribe(_ filters: inout [TopicFilter], on connection: any TransportConnection) async throws {
        guard !filters.isEmpty else { return }
        defer { filters = [] }
        try await connection.unsubscribe(from: filters)
    }

    private func requeue(_ messages: [Publication]) {
        guard !messages.isEmpty else { return }
        self.reportDropped(self.state.withLock { $0.machine.requeue(messages) }, reason: "outbox full")
    }
}
