import CoatyCore

/// The broker's shared state as a pure state machine: sessions, subscriptions, retained messages and
/// the QoS 1/2 flows in both directions. It does no I/O; every mutation appends ``Output``s that the
/// connection layer turns into packets, in order.
///
/// One value lives behind the broker's `Mutex`. The connection layer passes in decoded, validated
/// packets and owns the per-connection write queues.
struct BrokerSessions: Sendable {
    /// The limits that govern sessions.
    struct Limits: Sendable {
        /// The most QoS 1/2 messages in flight to one client.
        var maximumInFlight = 20
        /// The most QoS 1/2 messages queued per session beyond the in-flight window.
        var maximumQueued = 1000
        /// The most bytes of topics and payloads queued per session beyond the in-flight window.
        var maximumQueuedBytes = 16 << 20
        /// The most retained topics.
        var maximumRetained = 100_000
        /// The most bytes of retained topics and payloads.
        var maximumRetainedBytes = 64 << 20
        /// The most subscriptions one session may hold.
        var maximumSubscriptions = 10_000
        /// The most persistent sessions kept while their client is offline.
        var maximumOfflineSessions = 10_000
    }

    let limits: Limits
    private(set) var sessions: [ByteKey: Session] = [:]
    private var sessionKeys: [SessionID: ByteKey] = [:]
    private var connections: [ConnectionID: ConnectionRecord] = [:]
    private(set) var subscriptions = SubscriptionTrie()
    private(set) var retained: RetainedStore
    private var nextSessionID: UInt64 = 1
    /// Persistent sessions whose client is offline, oldest first (see ``OfflineSessions``).
    private var offline = OfflineSessions()

    /// Offline persistent sessions discarded because there were more than the limit.
    private(set) var discardedSessions = 0

    /// Messages dropped across all sessions because a queue was full or their session was discarded.
    private(set) var droppedMessages = 0

    /// Online sessions whose queue was at least a quarter full when a message had to wait in it, since
    /// the last ``takeCongestedSessions()``: a sign that publishers outpace that subscriber.
    private var congestedSessions: Set<SessionID> = []

    /// The changes to persistent sessions and retained messages not yet written, while persistence is
    /// on (see ``startJournal()``); `nil` otherwise, and then nothing is recorded.
    var journal: PersistenceJournal?

    init(limits: Limits = Limits()) {
        self.limits = limits
        self.retained = RetainedStore(maximumCount: limits.maximumRetained, maximumBytes: limits.maximumRetainedBytes)
    }

    // MARK: - Connections

    /// Attaches `connection` to the session of `clientID`, creating, resuming or replacing it.
    ///
    /// A client already connected with the same id is taken over: its connection is closed (an output)
    /// and its will published, unless both the old and the new session are persistent (mosquitto's
    /// semantics). A clean session discards any stored state [MQTT-3.1.2-6]; a persistent one resumes
    /// it and redelivers unacknowledged messages with DUP=1 and pending PUBRELs in the original order
    /// [MQTT-4.4.0-1], then fills the in-flight window from the queue.
    ///
    /// `access` (the client's ACL rules, `nil` without an ACL) decides from now on which messages the
    /// session receives, also while it is offline; a resumed session takes the new client's rules.
    ///
    /// - Returns: The CONNACK session-present flag [MQTT-3.2.2-1/2/3] and the session.
    mutating func connect(
        clientID: String,
        cleanSession: Bool,
        will: BrokerMessage?,
        connection: ConnectionID,
        access: ClientAccess? = nil,
        into outputs: inout [Output]
    ) -> (sessionPresent: Bool, session: SessionID) {
        let key = ByteKey(clientID)
        if let existing = self.sessions[key], let old = existing.connection {
            // Takeover [MQTT-3.1.4-2].
            let record = self.connections.removeValue(forKey: old)
            outputs.append(.close(old))
            if !(existing.isPersistent && !cleanSession), let will = record?.will {
                self.publish(will, into: &outputs)
            }
            self.sessions[key]?.connection = nil
        }
        var sessionPresent = false
        if let existing = self.sessions[key] {
            if cleanSession || !existing.isPersistent {
                self.destroySession(key: key)
            } else {
                sessionPresent = true
                self.offline.remove(existing.id)
            }
        }
        if !sessionPresent {
            let id = SessionID(rawValue: self.nextSessionID)
            self.nextSessionID += 1
            self.sessions[key] = Session(
                id: id,
                clientID: clientID,
                isPersistent: !cleanSession,
                queueCapacity: self.limits.maximumQueued,
                queueByteCapacity: self.limits.maximumQueuedBytes
            )
            self.sessionKeys[id] = key
            if !cleanSession { self.journal?.append(.sessionCreated(clientID: key.bytes)) }
        }
        self.connections[connection] = ConnectionRecord(sessionKey: key, will: will)
        let maximumInFlight = self.limits.maximumInFlight
        var records = self.recordBuffer
        let id = self.withSession(atKey: key) { session in
            session.connection = connection
            session.access = access
            for entry in session.inFlight {
                switch entry.state {
                case .awaitingPubAck, .awaitingPubRec:
                    outputs.append(.publish(connection, entry.message, packetID: entry.packetID, dup: true))
                case .awaitingPubComp:
                    outputs.append(.pubrel(connection, entry.packetID))
                }
            }
            Self.fillWindow(&session, maximumInFlight: maximumInFlight, recording: &records, into: &outputs)
            return session.id
        }
        self.record(records)
        guard let id else { return (false, SessionID(rawValue: 0)) }
        return (sessionPresent, id)
    }

    /// Detaches a closed connection: publishes its will unless it disconnected gracefully
    /// [MQTT-3.1.2-8/10], and discards a clean session or keeps a persistent one for later.
    ///
    /// A connection that was taken over or never attached is ignored.
    mutating func connectionClosed(_ connection: ConnectionID, graceful: Bool, into outputs: inout [Output]) {
        guard let record = self.connections.removeValue(forKey: connection) else { return }
        if let session = self.sessions[record.sessionKey], session.connection == connection {
            if session.isPersistent {
                self.sessions[record.sessionKey]?.connection = nil
                self.offline.append(session.id, key: record.sessionKey)
                self.discardOfflineSessionsOverLimit()
            } else {
                self.destroySession(key: record.sessionKey)
            }
        }
        if !graceful, let will = record.will {
            self.publish(will, into: &outputs)
        }
    }

    /// Forgets the will of a connection, because it sent DISCONNECT [MQTT-3.14.4-3].
    mutating func discardWill(of connection: ConnectionID) {
        self.connections[connection]?.will = nil
    }

    /// Discards the sessions offline longest while more than ``Limits/maximumOfflineSessions`` are
    /// offline, so that clients connecting with new ids and CleanSession=0 cannot grow the broker
    /// without bound. Their queued messages are lost and counted.
    private mutating func discardOfflineSessionsOverLimit() {
        while self.offline.count > self.limits.maximumOfflineSessions, let key = self.offline.removeOldest() {
            if let session = self.sessions[key] {
                self.droppedMessages += session.pending.count + session.inFlight.count
            }
            self.destroySession(key: key)
            self.discardedSessions += 1
        }
    }

    private mutating func destroySession(key: ByteKey) {
        guard let session = self.sessions.removeValue(forKey: key) else { return }
        if session.isPersistent { self.journal?.append(.sessionEnded(clientID: key.bytes)) }
        self.offline.remove(session.id)
        for filter in session.subscriptions.keys {
            self.subscriptions.remove(filter: filter.bytes, session: session.id)
        }
        self.sessionKeys.removeValue(forKey: session.id)
    }

    /// Adds a persistent session restored from disk (see ``restore(_:)``), offline, replacing any
    /// session of its client; `make` creates it with the id it gets.
    mutating func insertRestoredSession(_ make: (SessionID) -> Session) {
        let session = make(SessionID(rawValue: self.nextSessionID))
        self.nextSessionID += 1
        let key = ByteKey(session.clientID)
        self.destroySession(key: key)
        for (filter, qos) in session.subscriptions {
            self.subscriptions.insert(filter: filter.bytes, session: session.id, qos: qos)
        }
        self.sessions[key] = session
        self.sessionKeys[session.id] = key
        self.offline.append(session.id, key: key)
        self.discardOfflineSessionsOverLimit()
    }

    /// Stores a retained message restored from disk.
    mutating func restoreRetained(_ message: BrokerMessage) { self.retained.apply(message) }

    // MARK: - Publishing

    /// Routes a message from a client (or a will): updates the retained store if RETAIN is set, then
    /// delivers to each matching session once, at min(published, maximum granted) QoS with RETAIN=0
    /// [MQTT-3.3.1-9] [MQTT-3.3.5-1]. A session whose client may not read the topic (see
    /// ``Session/access``) does not get it, as mosquitto checks read access per delivered message.
    mutating func publish(_ message: BrokerMessage, into outputs: inout [Output]) {
        self.publish(message, to: self.subscribers(of: message.topic), into: &outputs)
    }

    /// Routes a message to `subscribers`, which ``subscribers(of:)`` found for its topic with no
    /// subscription changed since: a caller that must know who receives it matches the topic once.
    mutating func publish(_ message: BrokerMessage, to subscribers: Subscribers, into outputs: inout [Output]) {
        if message.retain {
            self.retained.apply(message)
            if self.journal != nil, Self.persistsRetained(topic: message.topic) {
                let stored = self.retained.message(topic: message.topic)
                self.journal?.append(stored.map { .retainedSet(message: $0) } ?? .retainedCleared(topic: message.topic))
            }
        }
        var live = message
        live.retain = false
        var levels: TopicLevels?
        for (sessionID, granted) in subscribers {
            guard let key = self.sessionKeys[sessionID] else { continue }
            var delivered = live
            delivered.qos = min(message.qos, granted)
            self.deliver(delivered, toSessionWithKey: key, levels: &levels, into: &outputs)
        }
    }

    /// Delivers to one session if its client may read the topic. `levels` caches the topic's levels
    /// for the next session, if a read check needed them.
    ///
    /// The check reads the session in place: copying it out of the table for its rules costs a hash
    /// and a retain per collection, on every message.
    private mutating func deliver(
        _ message: BrokerMessage,
        toSessionWithKey key: ByteKey,
        levels: inout TopicLevels?,
        into outputs: inout [Output]
    ) {
        let maximumInFlight = self.limits.maximumInFlight
        var records = self.recordBuffer
        let delivered = self.withSession(atKey: key) { session -> (congested: SessionID?, dropped: Int) in
            if let access = session.access {
                let topic = levels ?? TopicLevels(bytes: message.topic)
                levels = topic
                guard access.allows(.read, topic: topic) else { return (nil, 0) }
            }
            guard message.qos != .atMostOnce else {
                // QoS 0 is not queued for offline clients (optional in 3.1.1; mosquitto does not either).
                if let connection = session.connection {
                    outputs.append(.publish(connection, message, packetID: nil, dup: false))
                }
                return (nil, 0)
            }
            if session.isPersistent { records?.append(.queued(clientID: key.bytes, message: message)) }
            let inFlight = session.inFlight.count
            defer { Self.recordSent(session, since: inFlight, into: &records) }
            return Self.deliverAcknowledged(message, to: &session, maximumInFlight: maximumInFlight, into: &outputs)
        }
        self.record(records)
        if let congested = delivered?.congested { self.congestedSessions.insert(congested) }
        self.droppedMessages += delivered?.dropped ?? 0
    }

    /// Sends a QoS 1/2 message at once if the session's window has room, or queues it; returns the
    /// session if its queue is filling up, and how many of its oldest messages the queue dropped.
    private static func deliverAcknowledged(
        _ message: BrokerMessage,
        to session: inout Session,
        maximumInFlight: Int,
        into outputs: inout [Output]
    ) -> (congested: SessionID?, dropped: Int) {
        if let connection = session.connection, session.inFlight.count < maximumInFlight,
            session.pending.isEmpty, let packetID = session.allocatePacketID()
        {
            let state: Session.OutboundState = message.qos == .atLeastOnce ? .awaitingPubAck : .awaitingPubRec
            session.inFlight.append(Session.InFlight(packetID: packetID, message: message, state: state))
            outputs.append(.publish(connection, message, packetID: packetID, dup: false))
            return (nil, 0)
        }
        let congested = session.connection != nil && session.pending.isFilling
        let dropped = session.pending.append(message)
        session.droppedMessages += dropped
        return (congested ? session.id : nil, dropped)
    }

    /// Moves queued messages into free in-flight slots while the client is online; appends a `sent`
    /// record for each to `records` if the session is persistent.
    private static func fillWindow(
        _ session: inout Session,
        maximumInFlight: Int,
        recording records: inout [PersistenceRecord]?,
        into outputs: inout [Output]
    ) {
        guard let connection = session.connection else { return }
        let inFlight = session.inFlight.count
        defer { Self.recordSent(session, since: inFlight, into: &records) }
        while session.inFlight.count < maximumInFlight, let message = session.pending.popFirst() {
            guard let packetID = session.allocatePacketID() else { break }
            let state: Session.OutboundState = message.qos == .atLeastOnce ? .awaitingPubAck : .awaitingPubRec
            session.inFlight.append(Session.InFlight(packetID: packetID, message: message, state: state))
            outputs.append(.publish(connection, message, packetID: packetID, dup: false))
        }
    }

    // MARK: - Subscriptions

    /// Adds or replaces subscriptions and queues the matching retained messages with RETAIN=1
    /// [MQTT-3.3.1-6/8] [MQTT-3.8.4-3], those the client may read.
    ///
    /// A filter the session already holds is replaced. A new filter beyond
    /// ``Limits/maximumSubscriptions`` is refused (`nil`, SUBACK 0x80) and gets no retained messages.
    ///
    /// - Returns: The granted QoS per filter, in order (the broker grants what was requested), or `nil`
    ///   for a refused filter.
    mutating func subscribe(
        _ session: SessionID,
        to filters: [(filter: TopicFilter, qos: QualityOfService)],
        into outputs: inout [Output]
    ) -> [QualityOfService?] {
        guard let key = self.sessionKeys[session] else { return [] }
        let maximum = self.limits.maximumSubscriptions
        let granted: [QualityOfService?] = filters.map { filter, qos in
            let bytes = Array(filter.rawValue.utf8)
            let filterKey = ByteKey(bytes)
            // Whether the session is persistent, if the subscription was added.
            let added: Bool? =
                self.withSession(atKey: key) { session in
                    guard session.subscriptions[filterKey] != nil || session.subscriptions.count < maximum else {
                        return nil
                    }
                    session.subscriptions[filterKey] = qos
                    return session.isPersistent
                } ?? nil
            guard let isPersistent = added else { return nil }
            if isPersistent { self.journal?.append(.subscribed(clientID: key.bytes, filter: bytes, qos: qos)) }
            self.subscriptions.insert(filter: bytes, session: session, qos: qos)
            return qos
        }
        for ((filter, _), qos) in zip(filters, granted) {
            guard let qos else { continue }
            for var message in self.retained.messages(matching: filter) {
                message.qos = min(message.qos, qos)
                message.retain = true
                var levels: TopicLevels?
                self.deliver(message, toSessionWithKey: key, levels: &levels, into: &outputs)
            }
        }
        return granted
    }

    /// Removes subscriptions, comparing filters byte for byte [MQTT-3.10.4-1]. Unknown filters are ignored.
    mutating func unsubscribe(_ session: SessionID, from filters: [String]) {
        guard let key = self.sessionKeys[session] else { return }
        for filter in filters {
            let bytes = Array(filter.utf8)
            self.subscriptions.remove(filter: bytes, session: session)
            let isPersistent = self.withSession(atKey: key) { session in
                session.subscriptions.removeValue(forKey: ByteKey(bytes))
                return session.isPersistent
            }
            if isPersistent == true { self.journal?.append(.unsubscribed(clientID: key.bytes, filter: bytes)) }
        }
    }

    // MARK: - Acknowledgements from the client (broker is the sender)

    /// Handles PUBACK: completes a QoS 1 delivery. An unknown id is ignored; a PUBACK for a QoS 2
    /// message is a protocol violation (as mosquitto treats it).
    mutating func puback(_ session: SessionID, packetID: UInt16, into outputs: inout [Output]) -> AckResult {
        let maximumInFlight = self.limits.maximumInFlight
        var records = self.recordBuffer
        defer { self.record(records) }
        return self.withSession(session) { session in
            guard let index = session.inFlightIndex(of: packetID) else { return .ok }
            guard session.inFlight[index].state == .awaitingPubAck else { return .protocolViolation }
            session.inFlight.remove(at: index)
            session.acknowledgements &+= 1
            Self.record(PersistenceRecord.completed, packetID, of: session, into: &records)
            Self.fillWindow(&session, maximumInFlight: maximumInFlight, recording: &records, into: &outputs)
            return .ok
        } ?? .ok
    }

    /// Handles PUBREC: answers with PUBREL, also for a duplicate or unknown id (mosquitto's behaviour).
    /// A PUBREC for a QoS 1 message is a protocol violation.
    mutating func pubrec(_ session: SessionID, packetID: UInt16, into outputs: inout [Output]) -> AckResult {
        var records = self.recordBuffer
        defer { self.record(records) }
        return self.withSession(session) { session in
            guard let connection = session.connection else { return .ok }
            if let index = session.inFlightIndex(of: packetID) {
                switch session.inFlight[index].state {
                case .awaitingPubAck:
                    return .protocolViolation
                case .awaitingPubRec:
                    session.inFlight[index].state = .awaitingPubComp
                    session.acknowledgements &+= 1
                    // The payload is no longer needed: the PUBLISH is never resent after PUBREL.
                    session.inFlight[index].message.payload = []
                    Self.record(PersistenceRecord.pubrecReceived, packetID, of: session, into: &records)
                case .awaitingPubComp:
                    break
                }
            }
            outputs.append(.pubrel(connection, packetID))
            return .ok
        } ?? .ok
    }

    /// Handles PUBCOMP: completes a QoS 2 delivery. An unknown id is ignored; a PUBCOMP before PUBREC
    /// or for a QoS 1 message is a protocol violation.
    mutating func pubcomp(_ session: SessionID, packetID: UInt16, into outputs: inout [Output]) -> AckResult {
        let maximumInFlight = self.limits.maximumInFlight
        var records = self.recordBuffer
        defer { self.record(records) }
        return self.withSession(session) { session in
            guard let index = session.inFlightIndex(of: packetID) else { return .ok }
            guard session.inFlight[index].state == .awaitingPubComp else { return .protocolViolation }
            session.inFlight.remove(at: index)
            session.acknowledgements &+= 1
            Self.record(PersistenceRecord.completed, packetID, of: session, into: &records)
            Self.fillWindow(&session, maximumInFlight: maximumInFlight, recording: &records, into: &outputs)
            return .ok
        } ?? .ok
    }

    // MARK: - Inbound QoS 2 (broker is the receiver)

    /// Records an inbound QoS 2 PUBLISH. Returns `false` for a duplicate of one not yet released, which
    /// must be answered with PUBREC again but not delivered twice [MQTT-4.3.3-2].
    mutating func receiveQoS2(_ session: SessionID, packetID: UInt16) -> Bool {
        var records = self.recordBuffer
        defer { self.record(records) }
        return self.withSession(session) { session in
            guard session.inboundQoS2.insert(packetID).inserted else { return false }
            Self.record(PersistenceRecord.inboundReceived, packetID, of: session, into: &records)
            return true
        } ?? true
    }

    /// Handles PUBREL: releases the id so it can be reused. Always answered with PUBCOMP.
    mutating func release(_ session: SessionID, packetID: UInt16) {
        var records = self.recordBuffer
        defer { self.record(records) }
        self.withSession(session) { session in
            if session.inboundQoS2.remove(packetID) != nil {
                Self.record(PersistenceRecord.inboundReleased, packetID, of: session, into: &records)
            }
        }
    }

    /// Runs `body` on the session in place.
    ///
    /// In place, not copied out and written back: with a copy alive, the first change to each of its
    /// collections copies it whole: a client that keeps 65,535 QoS 2 identifiers unreleased would make
    /// every PUBLISH copy that set, and every acknowledgement copy the in-flight window it changes.
    private mutating func withSession<Result>(
        _ id: SessionID,
        _ body: (inout Session) -> Result
    ) -> Result? {
        guard let key = self.sessionKeys[id] else { return nil }
        return self.withSession(atKey: key, body)
    }

    /// Runs `body` on the session stored under `key` in place (see ``withSession(_:_:)``).
    private mutating func withSession<Result>(
        atKey key: ByteKey,
        _ body: (inout Session) -> Result
    ) -> Result? {
        guard let index = self.sessions.index(forKey: key) else { return nil }
        return body(&self.sessions.values[index])
    }

    // MARK: - Flow control

    /// Returns and forgets the sessions that became congested since the last call.
    mutating func takeCongestedSessions() -> Set<SessionID> {
        defer { self.congestedSessions = [] }
        return self.congestedSessions
    }

    /// Whether a session's queue is still at least a quarter full, and how many acknowledgements its
    /// client has sent so far; `nil` if the session is gone or offline.
    func backlog(of id: SessionID) -> (isCongested: Bool, acknowledgements: UInt64)? {
        guard let key = self.sessionKeys[id], let session = self.sessions[key], session.connection != nil else {
            return nil
        }
        return (session.pending.isFilling, session.acknowledgements)
    }

    // MARK: - Inspection (see also BrokerSessions+Inspection.swift)

    /// The number of connections attached.
    var connectionCount: Int { self.connections.count }
}
