import CoatyCore
import CoatyTransport
import Synchronization

extension CommunicationManager {
    /// Publishes messages by queueing them for ``run()``, reporting any dropped from a full outbox;
    /// with `directly`, from the calling task instead while online and idle.
    ///
    /// Requests and responses go directly: a round trip then needs no hand-off to either manager's
    /// send loop, which is most of its latency. One-way events are queued, so a task publishing many
    /// of them encodes the next while the send loop delivers the last. Either way a task's
    /// publications keep their order (see `ManagerStateMachine.directPublishConnection`).
    ///
    /// A message the connection cannot take without waiting, or refuses with an error, is queued with
    /// everything after it, so the send loop publishes it (or reports its error) in order.
    func enqueue(_ messages: [TransportMessage], directly: Bool = false) {
        if directly, let connection = self.state.withLock({ $0.machine.directPublishConnection }) {
            self.enqueue(messages, on: connection)
        } else {
            self.enqueue(messages[...])
        }
    }

    /// Publishes messages on `connection`, taken as `ManagerStateMachine.directPublishConnection`,
    /// from the calling task; queues the first it cannot take without waiting, and everything after it.
    func enqueue(_ messages: [TransportMessage], on connection: any TransportConnection) {
        var start = messages.startIndex
        while start < messages.endIndex, (try? connection.publishWithoutWaiting(messages[start])) == true {
            start += 1
        }
        if start < messages.endIndex { self.enqueue(messages[start...]) }
    }

    /// Queues messages for ``run()``, reporting any dropped from a full outbox.
    private func enqueue(_ messages: ArraySlice<TransportMessage>) {
        let enqueued = self.state.withLock { $0.machine.enqueue(messages) }
        if let wake = enqueued.wake { self.resume(CollectionOfOne(wake)) }
        self.reportDropped(
            enqueued.dropped,
            reason: "outbox full (capacity \(self.configuration.outboxCapacity)); oldest publication dropped"
        )
    }

    /// Reports publications dropped from the outbox.
    func reportDropped(_ messages: [TransportMessage], reason: String) {
        for message in messages {
            self.report(.init(kind: .droppedPublication, topic: message.topic, reason: reason))
        }
    }
}
