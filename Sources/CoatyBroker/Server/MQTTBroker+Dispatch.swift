import CoatyMQTTPackets

extension MQTTBroker.Core {
    /// Hands state-machine outputs to the connections' write queues, waking their writers. Called with
    /// the lock held, so packets reach each queue in the order the state machine decided.
    mutating func dispatch(_ outputs: [BrokerSessions.Output]) {
        var none: DirectWrites?
        self.dispatch(outputs, directWrites: &none)
    }

    /// Runs `body` with an empty outputs array, then dispatches what it put there (see
    /// ``dispatch(_:directWrites:)``). The array is the same one for every publish and acknowledgement
    /// a reader handles, so routing them allocates none; one that grew past 1,024 outputs is not kept.
    /// `body` must not use `directWrites` itself.
    mutating func withOutputs<Result>(
        _ directWrites: inout DirectWrites?,
        _ body: (inout Self, inout [BrokerSessions.Output]) -> Result
    ) -> Result {
        var outputs: [BrokerSessions.Output] = []
        swap(&outputs, &self.outputBuffer)
        let result = body(&self, &outputs)
        self.dispatch(outputs, directWrites: &directWrites)
        outputs.removeAll(keepingCapacity: outputs.capacity <= 1024)
        swap(&outputs, &self.outputBuffer)
        return result
    }

    /// Hands state-machine outputs to the connections' write queues, as ``dispatch(_:)`` does, for a
    /// reader: an idle writer is not woken, its outbox is claimed into `directWrites` (see
    /// ``OutboxState``).
    mutating func dispatch(_ outputs: [BrokerSessions.Output], directWrites: inout DirectWrites?) {
        for output in outputs {
            switch output {
            case .publish(let connection, let message, let packetID, let dup):
                guard let outbox = self.outboxes[connection] else { continue }
                let result = outbox.enqueue(
                    .publish(message, packetID: packetID, dup: dup),
                    droppable: packetID == nil,
                    directWrites: &directWrites
                )
                if result == .queuedCongested || result == .dropped { self.congestedConnections.insert(connection) }
                if result == .overflow { outbox.abort(reason: Self.slowConsumer(outbox)) }
            case .pubrel(let connection, let packetID):
                guard let outbox = self.outboxes[connection] else { continue }
                if outbox.enqueue(.packet(.pubrel(packetID)), droppable: false, directWrites: &directWrites)
                    == .overflow
                {
                    outbox.abort(reason: Self.slowConsumer(outbox))
                }
            case .close(let connection):
                self.outboxes[connection]?.abort()
            }
        }
        self.wakePersistenceWriterIfNeeded()
    }

    /// The close reason of a client whose unread bytes would exceed the bound; the connection's
    /// detach logs it with the client id.
    static func slowConsumer(_ outbox: Outbox) -> String {
        "\(outbox.unreadBytes) bytes unread, the next packet would exceed the bound of \(outbox.unreadLimit)"
    }
}
