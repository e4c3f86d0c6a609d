import CoatyCore
import Synchronization

extension MQTTBroker {
    /// The state a broker starts with: empty, or restored from the data directory of
    /// ``Configuration/persistence``, whose log is then rewritten as a snapshot of that state and
    /// records every change from now on.
    ///
    /// - Throws: ``BrokerError`` with code `.persistenceFailed` if the data directory cannot be used.
    static func initialSessions(
        _ configuration: Configuration
    ) throws(BrokerError) -> (sessions: BrokerSessions, persistence: BrokerPersistence?) {
        let limits = BrokerSessions.Limits(
            maximumInFlight: configuration.maximumInFlightMessagesPerClient,
            maximumQueued: configuration.maximumQueuedMessagesPerClient,
            maximumQueuedBytes: configuration.maximumQueuedBytesPerClient,
            maximumRetained: configuration.maximumRetainedMessages,
            maximumRetainedBytes: configuration.maximumRetainedBytes,
            maximumSubscriptions: configuration.maximumSubscriptionsPerClient,
            maximumOfflineSessions: configuration.maximumOfflineSessions
        )
        var sessions = BrokerSessions(limits: limits)
        guard let options = configuration.persistence else { return (sessions, nil) }
        guard options.syncInterval > .zero else {
            throw BrokerError(.invalidConfiguration, "the persistence sync interval must be more than zero")
        }
        let logger = configuration.logger
        let (persistence, recovery) = try BrokerPersistence.open(options, limits: limits, logger: logger)
        if let damage = recovery.damage {
            logger.warning(
                "persistence: damaged log recovered up to the damage; the damaged file is kept",
                metadata: [
                    "path": persistence.logPath, "damage": "\(damage)", "recordsKept": "\(recovery.recordCount)",
                    "copy": persistence.logPath + ".damaged",
                ]
            )
        }
        if recovery.state.ignoredRecords > 0 {
            logger.warning(
                "persistence: log records that did not fit the state were ignored",
                metadata: ["path": persistence.logPath, "records": "\(recovery.state.ignoredRecords)"]
            )
        }
        sessions.restore(recovery.state)
        try persistence.startLog(with: sessions.snapshotRecords(), keepingDamagedLog: recovery.damage != nil)
        sessions.startJournal()
        logger.notice(
            "persistence: state restored",
            metadata: [
                "path": persistence.logPath, "sessions": "\(recovery.state.sessions.count)",
                "messages": "\(recovery.state.messageCount)", "retained": "\(recovery.state.retained.count)",
                "syncInterval": "\(options.syncInterval)",
            ]
        )
        return (sessions, persistence)
    }

    /// Writes the journal to the log every sync interval until cancelled (a child task of ``run()``).
    func writeJournal(to persistence: BrokerPersistence) async throws {
        try await persistence.run(
            take: { self.core.withLock { $0.sessions.takeJournal() } },
            capture: { self.core.withLock { ($0.sessions.takeJournal(), $0.sessions) } }
        )
    }

    /// Writes the rest of the journal and closes the log, once every connection has closed.
    func finishPersistence() {
        self.persistence?.finish(
            take: { self.core.withLock { $0.sessions.takeJournal() } },
            capture: { self.core.withLock { ($0.sessions.takeJournal(), $0.sessions) } }
        )
    }
}

extension MQTTBroker.Core {
    /// Wakes the persistence writer early when the journal has grown to its flush threshold, so the
    /// changes waiting in memory stay bounded between two sync intervals.
    func wakePersistenceWriterIfNeeded() {
        guard let persistence = self.persistence, let journal = self.sessions.journal,
            journal.byteCount >= BrokerPersistence.flushThreshold
        else { return }
        persistence.wake()
    }
}
