/// The changes to persistent state that ``BrokerSessions`` made since the persistence writer last
/// took them, in order. Recording a change copies no payload (messages share their bytes), so the
/// broker's lock is held no longer; the writer encodes the records outside the lock.
struct PersistenceJournal: Sendable {
    /// The records not yet taken, oldest first.
    private(set) var records: [PersistenceRecord] = []
    /// About how many bytes the records take encoded, to wake the writer before the buffer grows large.
    private(set) var byteCount = 0

    mutating func append(_ record: PersistenceRecord) {
        self.records.append(record)
        self.byteCount += PersistenceLogCodec.frameOverhead + 16 + record.variableSize
    }

    /// Returns the records and starts over empty.
    mutating func take() -> [PersistenceRecord] {
        defer {
            self.records = []
            self.byteCount = 0
        }
        return self.records
    }
}
