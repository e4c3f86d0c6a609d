// The invariants of the broker's state checked after every step of a fuzzed program.
import CoatyCore
import Synchronization

extension Harness {
    func checkInvariants() {
        let configuration = self.configuration
        let attached = self.clients.compactMap { $0 } + self.closing
        let reference = self.reference
        let topicsSeen = self.topicsSeen
        self.broker.core.withLock { core in
            let state = core.sessions
            var subscriptionCount = 0
            var offline = 0
            var connections = 0
            check(
                state.sessions.count == reference.count,
                "\(state.sessions.count) sessions, reference \(reference.count)"
            )
            for (key, session) in state.sessions {
                check(Array(session.clientID.utf8) == key.bytes, "session stored under another key")
                guard let expected = reference[session.id] else { fatalError("session \(session.id) not in reference") }
                check(expected.clientID == key.bytes, "session \(session.id) has another client id")
                check(expected.isPersistent == session.isPersistent, "session \(session.id) persistence")
                check(
                    expected.subscriptions
                        == Dictionary(uniqueKeysWithValues: session.subscriptions.map { ($0.bytes, $1) }),
                    "session \(session.id) subscriptions \(session.subscriptions) vs \(expected.subscriptions)"
                )
                check(expected.connection == session.connection, "session \(session.id) connection")
                check(expected.inboundQoS2 == session.inboundQoS2, "session \(session.id) inbound QoS 2 ids")
                subscriptionCount += session.subscriptions.count
                check(
                    session.subscriptions.count <= configuration.maximumSubscriptionsPerClient,
                    "too many subscriptions"
                )
                let ids = session.inFlight.map(\.packetID)
                check(ids.count <= configuration.maximumInFlightMessagesPerClient, "in-flight window exceeded")
                check(Set(ids).count == ids.count && !ids.contains(0), "in-flight ids \(ids)")
                let pending = session.pending
                check(pending.count <= configuration.maximumQueuedMessagesPerClient, "session queue too long")
                let bytes = pending.elements.reduce(0) { $0 + $1.queuedSize }
                check(bytes == pending.byteCount, "session queue counts \(pending.byteCount) bytes, holds \(bytes)")
                check(bytes <= configuration.maximumQueuedBytesPerClient || pending.count == 1, "session queue bytes")
                check(!pending.elements.contains { $0.qos == .atMostOnce }, "QoS 0 in a session queue")
                if let connection = session.connection {
                    connections += 1
                    check(attached.contains { $0.id == connection }, "session attached to a gone connection")
                    check(
                        pending.isEmpty || ids.count == configuration.maximumInFlightMessagesPerClient,
                        "a message waits while the window has room"
                    )
                } else {
                    offline += 1
                    check(session.isPersistent, "an offline clean session")
                }
            }
            check(offline <= configuration.maximumOfflineSessions, "too many offline sessions")
            check(
                state.connectionCount == connections,
                "\(state.connectionCount) connection records, \(connections) attached"
            )
            check(
                state.subscriptions.count == subscriptionCount,
                "trie holds \(state.subscriptions.count), sessions \(subscriptionCount)"
            )
            let retained = state.retained
            check(retained.count <= configuration.maximumRetainedMessages, "retained count")
            check(retained.byteCount <= configuration.maximumRetainedBytes, "retained bytes")
            var found = 0
            var bytes = 0
            for topic in topicsSeen {
                guard let message = retained.message(topic: topic) else { continue }
                check(message.retain && !message.payload.isEmpty && message.topic == topic, "retained message")
                found += 1
                bytes += message.queuedSize
            }
            check(
                found == retained.count && bytes == retained.byteCount,
                "retained store \(retained.count)/\(retained.byteCount), found \(found)/\(bytes)"
            )
            for (id, outbox) in core.outboxes {
                check(attached.contains { $0.id == id }, "outbox of a detached connection")
                check(outbox.depth <= 1 || outbox.unreadBytes <= outbox.unreadLimit, "outbox beyond its unread bound")
            }
        }
    }
}
