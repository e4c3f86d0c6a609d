import CoatyCore
import CoatyTransport
import Synchronization

extension CommunicationManager {
    /// Publishes the messages of one event, as ``publish(_:)-(AdvertiseEvent)`` does: queues them for
    /// the send loop, suspending while the outbox is full and online until the send loop has taken it.
    ///
    /// - Throws: `CancellationError` if the task is cancelled while it waits (nothing is published).
    func publishWaiting(_ messages: [TransportMessage]) async throws {
        let publication = Publication(messages)
        var enqueued = self.state.withLock { $0.machine.enqueue(publication, whenFull: .refuse) }
        while enqueued.outcome != .queued {
            let waiter = self.waiters.makeToken()
            enqueued = self.state.withLock { $0.machine.enqueue(publication, whenFull: .wait(waiter)) }
            guard enqueued.outcome == .waiting else {
                self.waiters.discard(waiter)
                break
            }
            try await self.waiters.wait(waiter)
        }
        self.queued(enqueued)
    }

    /// Publishes the messages of one event without suspending, as
    /// ``publishWithoutWaiting(_:)-(AdvertiseEvent)`` does.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/outboxFull`` if the outbox
    ///   is full while online.
    func publishRefusing(_ messages: [TransportMessage]) throws(CommunicationError) {
        let enqueued = self.state.withLock { $0.machine.enqueue(Publication(messages), whenFull: .refuse) }
        guard enqueued.outcome == .queued else {
            throw CommunicationError(
                .outboxFull,
                "the outbox is full (\(self.configuration.outboxCapacity) publications) while online; "
                    + "await publish(_:) to wait for room"
            )
        }
        self.queued(enqueued)
    }

    /// Publishes a request or a response: with `directly`, from the calling task while online and idle,
    /// else by queueing it for ``run()``, beyond the outbox's bound while online (see
    /// `FullOutboxPolicy.exceed`). `request` names the request's first routing entry, so that its
    /// publication is withdrawn if still queued when its caller gives up.
    ///
    /// Requests and responses go directly: a round trip then needs no hand-off to either manager's
    /// send loop, which is most of its latency. One-way events are queued, so a task publishing many
    /// of them encodes the next while the send loop delivers the last. Either way a task's
    /// publications keep their order (see `ManagerStateMachine.directPublishConnection`).
    ///
    /// A message the connection cannot take without waiting, or refuses with an error, is queued with
    /// everything after it, so the send loop publishes it (or reports its error) in order.
    func enqueue(_ messages: [TransportMessage], directly: Bool = false, request: ObserverID? = nil) {
        if directly, let connection = self.state.withLock({ $0.machine.directPublishConnection }) {
            self.enqueue(messages, on: connection, request: request)
        } else {
            self.enqueue(Publication(messages, request: request))
        }
    }

    /// Publishes messages on `connection`, taken as `ManagerStateMachine.directPublishConnection`,
    /// from the calling task; queues the first it cannot take without waiting, and everything after it.
    func enqueue(_ messages: [TransportMessage], on connection: any TransportConnection, request: ObserverID? = nil) {
        var start = messages.startIndex
        while start < messages.endIndex, (try? connection.publishWithoutWaiting(messages[start])) == true {
            start += 1
        }
        if start < messages.endIndex { self.enqueue(Publication(Array(messages[start...]), request: request)) }
    }

    /// Queues a publication for ``run()``, beyond the outbox's bound while online.
    private func enqueue(_ publication: Publication) {
        self.queued(self.state.withLock { $0.machine.enqueue(publication, whenFull: .exceed) })
    }

    /// Wakes the send loop for a queued publication, and reports the one dropped for it while offline.
    private func queued(_ enqueued: ManagerStateMachine<any TransportConnection, ObserverReceiver>.Enqueued) {
        if let wake = enqueued.wake { self.resume(CollectionOfOne(wake)) }
        if let dropped = enqueued.dropped {
            self.reportDropped(
                [dropped],
                reason: "outbox full while offline (capacity \(self.configuration.outboxCapacity)); "
                    + "oldest publication dropped"
            )
        }
    }

    /// Reports publications dropped from the outbox: each of their messages.
    func reportDropped(_ publications: [Publication], reason: String) {
        for publication in publications {
            for message in publication.messages {
                self.report(.init(kind: .droppedPublication, topic: message.topic, reason: reason))
            }
        }
    }
}
