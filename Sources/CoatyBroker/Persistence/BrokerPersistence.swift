import CoatyCore
import CoatySockets
import Synchronization

/// The I/O half of a broker's persistence: the append-only log in the data directory.
///
/// The broker's state records its changes in a ``PersistenceJournal`` under the broker's lock; this
/// writer takes them every ``MQTTBroker/Persistence/syncInterval`` (or as soon as about 1 MiB has
/// accumulated), appends them to `broker.log` and syncs the file. When the log has grown past 4 MiB
/// and 4 times the last snapshot, it is compacted: the live state is written as a snapshot to
/// `broker.log.tmp`, synced and renamed over the log. On shutdown everything is written and synced.
///
/// A failed write is logged once and leaves the log possibly torn; the next attempt then writes a
/// whole snapshot instead of appending, so the log is consistent again as soon as the disk is.
final class BrokerPersistence: Sendable {
    /// The configuration: the directory and the sync interval.
    let options: MQTTBroker.Persistence
    /// The log's path: `broker.log` in the data directory.
    let logPath: String
    private let logger: CoatyLogger
    /// `broker.lock` in the data directory, locked for the broker's life so two never share it.
    private let lockFile: AppendOnlyFile
    private let writer: Mutex<Writer>
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation

    /// The journal size at which the broker wakes the writer before the interval ends.
    static let flushThreshold = 1 << 20
    /// The log size below which it is never compacted.
    static let minimumCompactionSize = 4 << 20

    private struct Writer {
        var file: AppendOnlyFile?
        /// The bytes in the log, header included.
        var logSize = 0
        /// The size of the last snapshot, the measure of the live state for compaction.
        var snapshotSize = 0
        /// Whether a write failed, so the next one must be a snapshot.
        var needsSnapshot = false
    }

    /// What was found in the data directory.
    struct Recovery {
        /// The state the valid records rebuild.
        var state: PersistentState
        /// The valid records.
        var recordCount: Int
        /// Where and why the log stopped being valid, if it did.
        var damage: PersistenceLogCodec.Damage?
    }

    private init(options: MQTTBroker.Persistence, lockFile: AppendOnlyFile, logger: CoatyLogger) {
        self.options = options
        self.logPath = options.directory + "/broker.log"
        self.lockFile = lockFile
        self.logger = logger
        self.writer = Mutex(Writer())
        (self.wakeups, self.wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Creates the data directory if needed, locks it and replays its log.
    ///
    /// A damaged log is recovered up to the damage, never refused; ``Recovery/damage`` says what was
    /// discarded, and ``startLog(with:keepingDamagedLog:)`` keeps the damaged file beside the new one.
    ///
    /// - Throws: ``BrokerError`` with code `.persistenceFailed` if the directory cannot be created or
    ///   read, or another broker uses it.
    static func open(
        _ options: MQTTBroker.Persistence,
        limits: BrokerSessions.Limits,
        logger: CoatyLogger
    ) throws(BrokerError) -> (BrokerPersistence, Recovery) {
        let lockFile: AppendOnlyFile
        let bytes: [UInt8]
        do {
            try FileSystem.createDirectory(options.directory)
            lockFile = try AppendOnlyFile.open(options.directory + "/broker.lock")
        } catch {
            throw BrokerError(
                .persistenceFailed,
                "cannot use the data directory '\(options.directory)'",
                underlying: error
            )
        }
        do {
            try lockFile.lockExclusively()
        } catch {
            lockFile.close()
            throw BrokerError(
                .persistenceFailed,
                "the data directory '\(options.directory)' is in use by another broker",
                underlying: error
            )
        }
        let persistence = BrokerPersistence(options: options, lockFile: lockFile, logger: logger)
        do {
            bytes = try FileSystem.contents(ofFile: persistence.logPath) ?? []
        } catch {
            lockFile.close()
            throw BrokerError(.persistenceFailed, "cannot read '\(persistence.logPath)'", underlying: error)
        }
        let (records, damage) = PersistenceLogCodec.decode(bytes)
        let state = PersistentState(limits: limits, replaying: records)
        return (persistence, Recovery(state: state, recordCount: records.count, damage: damage))
    }

    /// Writes `records` (the restored state) as the new log and opens it for appending. A damaged
    /// log is first renamed to `broker.log.damaged`, replacing an older one, for inspection.
    ///
    /// - Throws: ``BrokerError`` with code `.persistenceFailed` if the log cannot be written.
    func startLog(with records: [PersistenceRecord], keepingDamagedLog: Bool) throws(BrokerError) {
        do {
            if keepingDamagedLog { try FileSystem.rename(self.logPath, to: self.logPath + ".damaged") }
            try self.writeSnapshot(records)
        } catch {
            self.close()
            throw BrokerError(.persistenceFailed, "cannot write '\(self.logPath)'", underlying: error)
        }
    }

    /// Wakes the writer before its interval ends, because the journal has grown large.
    func wake() { self.wakeup.yield() }

    /// Writes the journal every sync interval, or when woken, until cancelled.
    ///
    /// - Parameters:
    ///   - take: Takes the journal's records (under the broker's lock).
    ///   - capture: Takes the journal's records and a copy of the state (under the broker's lock).
    func run(
        take: @Sendable () -> [PersistenceRecord],
        capture: @Sendable () -> (records: [PersistenceRecord], state: BrokerSessions)
    ) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                while true {
                    try await Task.sleep(for: self.options.syncInterval)
                    self.wakeup.yield()
                }
            }
            for await _ in self.wakeups {
                try Task.checkCancellation()
                self.writeJournal(take: take, capture: capture)
            }
        }
    }

    /// Writes what is left of the journal, syncs and closes the log: the clean shutdown.
    func finish(
        take: () -> [PersistenceRecord],
        capture: () -> (records: [PersistenceRecord], state: BrokerSessions)
    ) {
        self.writeJournal(take: take, capture: capture)
        self.close()
    }

    /// Appends and syncs the journal, or compacts the log if it is due (or a write failed before).
    /// ``run(take:capture:)`` calls it every interval; tests call it directly.
    func writeJournal(
        take: () -> [PersistenceRecord],
        capture: () -> (records: [PersistenceRecord], state: BrokerSessions)
    ) {
        let (needsSnapshot, isLarge) = self.writer.withLock { writer in
            (
                writer.needsSnapshot,
                writer.logSize > max(Self.minimumCompactionSize, 4 * writer.snapshotSize)
            )
        }
        do {
            if needsSnapshot {
                try self.writeSnapshot(capture().state.snapshotRecords())
                self.logger.notice("persistence: the log is written again", metadata: ["path": self.logPath])
            } else if isLarge {
                // The records before the copy go to the old log first, so it stays whole until the rename.
                let (records, state) = capture()
                try self.append(records)
                try self.writeSnapshot(state.snapshotRecords())
            } else {
                try self.append(take())
            }
        } catch {
            let first = self.writer.withLock { writer in
                defer { writer.needsSnapshot = true }
                return !writer.needsSnapshot
            }
            if first {
                self.logger.error(
                    "persistence: cannot write the log; changes are kept in memory and retried",
                    metadata: ["path": self.logPath, "error": "\(error)"]
                )
            }
        }
    }

    /// Appends records to the log and syncs it.
    private func append(_ records: [PersistenceRecord]) throws(SocketError) {
        guard !records.isEmpty else { return }
        var bytes: [UInt8] = []
        for record in records { PersistenceLogCodec.encode(record, into: &bytes) }
        try self.writer.withLock { writer throws(SocketError) in
            guard let file = writer.file else { throw SocketError.closed("write") }
            try file.append(bytes)
            writer.logSize += bytes.count
            try file.synchronize()
        }
    }

    /// Replaces the log with a snapshot of `records` and appends to it from now on.
    private func writeSnapshot(_ records: [PersistenceRecord]) throws(SocketError) {
        let bytes = PersistenceLogCodec.encodeLog(records)
        try self.writer.withLock { writer throws(SocketError) in
            try FileSystem.replaceFile(self.logPath, with: bytes)
            let file = try AppendOnlyFile.open(self.logPath)
            writer.file?.close()
            writer.file = file
            writer.logSize = bytes.count
            writer.snapshotSize = bytes.count
            writer.needsSnapshot = false
        }
    }

    private func close() {
        self.writer.withLock { writer in
            writer.file?.close()
            writer.file = nil
        }
        self.wakeup.finish()
        self.lockFile.close()
    }
}
