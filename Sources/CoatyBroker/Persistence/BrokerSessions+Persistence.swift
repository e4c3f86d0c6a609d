import CoatyCore

extension BrokerSessions {
    /// Starts recording every change to persistent sessions and retained messages in ``journal``.
    mutating func startJournal() {
        if self.journal == nil { self.journal = PersistenceJournal() }
    }

    /// Returns the recorded changes not yet taken, oldest first, and forgets them.
    mutating func takeJournal() -> [PersistenceRecord] {
        self.journal?.take() ?? []
    }

    /// An empty buffer for the records of a change made in place (where `self` cannot be touched), or
    /// `nil` when nothing is recorded, so that no record is made then.
    var recordBuffer: [PersistenceRecord]? { self.journal == nil ? nil : [] }

    /// Appends the records collected in a ``recordBuffer``.
    mutating func record(_ records: [PersistenceRecord]?) {
        guard let records, !records.isEmpty else { return }
        for record in records { self.journal?.append(record) }
    }

    /// Whether a retained message on `topic` is persisted: all but the broker's own `$SYS` statistics,
    /// which describe the running process and are published again after a restart (as in mosquitto).
    static func persistsRetained(topic: [UInt8]) -> Bool { !topic.starts(with: "$SYS".utf8) }

    /// Appends the record `kind` makes for `packetID` if the session is persistent.
    static func record(
        _ kind: (_ clientID: [UInt8], _ packetID: UInt16) -> PersistenceRecord,
        _ packetID: UInt16,
        of session: Session,
        into records: inout [PersistenceRecord]?
    ) {
        if records != nil, session.isPersistent { records?.append(kind(Array(session.clientID.utf8), packetID)) }
    }

    /// Appends a `sent` record for each message that went in flight since the window held
    /// `previousCount` messages, if the session is persistent.
    static func recordSent(_ session: Session, since previousCount: Int, into records: inout [PersistenceRecord]?) {
        guard records != nil, session.isPersistent, session.inFlight.count > previousCount else { return }
        let key = Array(session.clientID.utf8)
        for entry in session.inFlight[previousCount...] {
            records?.append(.sent(clientID: key, packetID: entry.packetID))
        }
    }

    /// Adds the sessions and retained messages of a replayed log to an empty broker state: each
    /// session is persistent and offline (its client reconnects to resume it), with its subscriptions,
    /// messages in flight (resent with DUP=1 on reconnect, under their packet ids), queued messages
    /// and unreleased inbound QoS 2 ids. Sessions beyond ``Limits/maximumOfflineSessions`` are
    /// discarded oldest first, as when they go offline.
    mutating func restore(_ state: PersistentState) {
        let limits = self.limits
        for (clientID, stored) in state.sessionsInOrder {
            guard let client = String(validating: clientID, as: UTF8.self) else { continue }
            self.insertRestoredSession { id in
                var session = Session(
                    id: id,
                    clientID: client,
                    isPersistent: true,
                    queueCapacity: limits.maximumQueued,
                    queueByteCapacity: limits.maximumQueuedBytes
                )
                session.subscriptions = SmallDictionary(
                    Dictionary(uniqueKeysWithValues: stored.subscriptions.map { (ByteKey($0.key), $0.value) })
                )
                session.inFlight = stored.inFlight
                session.pending = stored.pending
                session.inboundQoS2 = stored.inboundQoS2
                if let last = stored.inFlight.last?.packetID {
                    session.nextPacketID = last == UInt16.max ? 1 : last + 1
                }
                return session
            }
        }
        for message in state.retained.allMessages { self.restoreRetained(message) }
    }

    /// The records that rebuild the persistent part of this state from nothing: each persistent
    /// session (online or offline) with its subscriptions, inbound QoS 2 ids, messages in flight and
    /// queued, then every retained message, sessions and topics in byte order. Compaction writes them
    /// as a new log.
    func snapshotRecords() -> [PersistenceRecord] {
        var records: [PersistenceRecord] = []
        let persistent = self.sessions.filter(\.value.isPersistent).sorted {
            $0.key.bytes.lexicographicallyPrecedes($1.key.bytes)
        }
        for (sessionKey, session) in persistent {
            let key = sessionKey.bytes
            records.append(.sessionCreated(clientID: key))
            for (filter, qos) in session.subscriptions.sorted(by: {
                $0.key.bytes.lexicographicallyPrecedes($1.key.bytes)
            }) {
                records.append(.subscribed(clientID: key, filter: filter.bytes, qos: qos))
            }
            for packetID in session.inboundQoS2.sorted() {
                records.append(.inboundReceived(clientID: key, packetID: packetID))
            }
            for entry in session.inFlight {
                records.append(.queued(clientID: key, message: entry.message))
                records.append(.sent(clientID: key, packetID: entry.packetID))
                if entry.state == .awaitingPubComp {
                    records.append(.pubrecReceived(clientID: key, packetID: entry.packetID))
                }
            }
            for message in session.pending.elements { records.append(.queued(clientID: key, message: message)) }
        }
        for message in self.retained.allMessages where Self.persistsRetained(topic: message.topic) {
            records.append(.retainedSet(message: message))
        }
        return records
    }
}
