import CoatyCore

/// The state that outlives a restart, rebuilt by replaying ``PersistenceRecord``s: the persistent
/// sessions with their subscriptions, in-flight and queued QoS 1/2 messages and unreleased inbound
/// QoS 2 ids, and the retained messages. It does no I/O.
///
/// Queues and the retained store apply the broker's limits as they did when the records were
/// written, so replaying drops what the running broker dropped. A record that does not fit the
/// state (for a session that does not exist, or an id not in flight) is ignored and counted in
/// ``ignoredRecords``: a valid prefix of a log never has one, but the state stays usable if it does.
struct PersistentState: Sendable {
    /// One persistent session as stored.
    struct StoredSession: Sendable {
        /// Topic filter bytes → granted QoS.
        var subscriptions: [[UInt8]: QualityOfService] = [:]
        /// Outbound QoS 1/2 messages in flight, oldest first, with their packet ids.
        var inFlight: [Session.InFlight] = []
        /// Outbound QoS 1/2 messages waiting for the client.
        var pending: MessageQueue
        /// Inbound QoS 2 ids received and not yet released.
        var inboundQoS2: Set<UInt16> = []
        /// The order the session was created in, so sessions are restored oldest first.
        var sequence: Int
    }

    let limits: BrokerSessions.Limits
    /// The persistent sessions by client id bytes.
    private(set) var sessions: [[UInt8]: StoredSession] = [:]
    /// The retained messages.
    private(set) var retained: RetainedStore
    /// Records that did not fit the state and were skipped.
    private(set) var ignoredRecords = 0
    private var nextSequence = 0

    init(limits: BrokerSessions.Limits) {
        self.limits = limits
        self.retained = RetainedStore(maximumCount: limits.maximumRetained, maximumBytes: limits.maximumRetainedBytes)
    }

    /// The state that `records` rebuild from nothing.
    init(limits: BrokerSessions.Limits, replaying records: some Sequence<PersistenceRecord>) {
        self.init(limits: limits)
        for record in records { self.apply(record) }
    }

    /// The sessions oldest first, with their client ids.
    var sessionsInOrder: [(clientID: [UInt8], session: StoredSession)] {
        self.sessions.sorted { $0.value.sequence < $1.value.sequence }.map { ($0.key, $0.value) }
    }

    /// The number of QoS 1/2 messages held across all sessions, in flight and queued.
    var messageCount: Int { self.sessions.values.reduce(0) { $0 + $1.inFlight.count + $1.pending.count } }

    /// Applies one record.
    mutating func apply(_ record: PersistenceRecord) {
        switch record {
        case .sessionCreated(let client):
            self.sessions[client] = StoredSession(
                pending: MessageQueue(
                    capacity: self.limits.maximumQueued,
                    byteCapacity: self.limits.maximumQueuedBytes
                ),
                sequence: self.nextSequence
            )
            self.nextSequence += 1
        case .sessionEnded(let client):
            if self.sessions.removeValue(forKey: client) == nil { self.ignoredRecords += 1 }
        case .subscribed(let client, let filter, let qos):
            self.update(client) { $0.subscriptions[filter] = qos }
        case .unsubscribed(let client, let filter):
            self.update(client) { $0.subscriptions[filter] = nil }
        case .queued(let client, let message):
            self.update(client) { _ = $0.pending.append(message) }
        case .sent(let client, let packetID):
            self.update(client) { session in
                guard !session.inFlight.contains(where: { $0.packetID == packetID }),
                    let message = session.pending.popFirst()
                else { return false }
                let state: Session.OutboundState = message.qos == .atLeastOnce ? .awaitingPubAck : .awaitingPubRec
                session.inFlight.append(Session.InFlight(packetID: packetID, message: message, state: state))
                return true
            }
        case .pubrecReceived(let client, let packetID):
            self.update(client) { session in
                guard let index = session.inFlight.firstIndex(where: { $0.packetID == packetID }) else { return false }
                session.inFlight[index].state = .awaitingPubComp
                session.inFlight[index].message.payload = []
                return true
            }
        case .completed(let client, let packetID):
            self.update(client) { session in
                guard let index = session.inFlight.firstIndex(where: { $0.packetID == packetID }) else { return false }
                session.inFlight.remove(at: index)
                return true
            }
        case .inboundReceived(let client, let packetID):
            self.update(client) { $0.inboundQoS2.insert(packetID) }
        case .inboundReleased(let client, let packetID):
            self.update(client) { $0.inboundQoS2.remove(packetID) }
        case .retainedSet(let message):
            self.retained.apply(message)
        case .retainedCleared(let topic):
            self.retained.apply(BrokerMessage(topic: topic, payload: [], qos: .atMostOnce, retain: true))
        }
    }

    /// Changes a session in place; a record for a session that does not exist, or that `body` finds
    /// inapplicable (returns `false`), is counted as ignored.
    private mutating func update(_ client: [UInt8], _ body: (inout StoredSession) -> Bool) {
        guard let index = self.sessions.index(forKey: client), body(&self.sessions.values[index]) else {
            self.ignoredRecords += 1
            return
        }
    }

    private mutating func update(_ client: [UInt8], _ body: (inout StoredSession) -> Void) {
        self.update(client) { (session: inout StoredSession) -> Bool in
            body(&session)
            return true
        }
    }
}
