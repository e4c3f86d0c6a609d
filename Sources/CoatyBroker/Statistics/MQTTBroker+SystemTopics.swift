import CoatyCore
import Synchronization

extension MQTTBroker {
    /// Publishes the `$SYS/broker/…` topics that changed, retained, at once and then every
    /// ``Configuration/systemTopicInterval``, until cancelled.
    func publishSystemTopics(every interval: Duration) async throws {
        let start = ContinuousClock.now
        var topics = SystemTopics()
        while true {
            let connected = self.core.withLock { $0.sessions.connectionCount }
            let changes = topics.changes(
                traffic: self.traffic.snapshot,
                connectedClients: connected,
                uptime: ContinuousClock.now - start
            )
            self.publishRetained(changes)
            try await Task.sleep(for: interval)
        }
    }

    /// Publishes broker-made messages, QoS 0 and retained, as if a client had sent them.
    @inline(never)
    private func publishRetained(_ messages: [(topic: String, payload: String)]) {
        guard !messages.isEmpty else { return }
        self.core.withLock { core in
            var outputs: [BrokerSessions.Output] = []
            for (topic, payload) in messages {
                core.sessions.publish(
                    BrokerMessage(topic: topic, payload: Array(payload.utf8), qos: .atMostOnce, retain: true),
                    into: &outputs
                )
            }
            core.dispatch(outputs)
        }
    }
}
