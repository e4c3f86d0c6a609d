/// The persistent sessions whose client is offline, in the order they went offline, so that the
/// broker can discard the one offline longest when there are too many.
///
/// A session that comes back online or is destroyed is removed from the count at once but stays in
/// the order as a stale entry, recognised by its stamp and skipped when it reaches the front. The
/// order is compacted when more than half of it is stale or consumed, so every operation is amortised
/// O(1) and memory stays proportional to the sessions actually offline.
struct OfflineSessions: Sendable {
    private struct Entry: Sendable {
        var session: SessionID
        var key: ByteKey
        var stamp: UInt64
    }

    /// Oldest first; entries before `head` are consumed.
    private var order: [Entry] = []
    private var head = 0
    /// The stamp of each offline session's current entry in `order`.
    private var stamps: [SessionID: UInt64] = [:]
    private var nextStamp: UInt64 = 0

    /// How many sessions are offline.
    var count: Int { self.stamps.count }

    /// How many entries the order holds, stale and consumed ones included (for tests of its bound).
    var storedEntries: Int { self.order.count }

    /// Records that `session`, stored under `key`, went offline now.
    mutating func append(_ session: SessionID, key: ByteKey) {
        self.nextStamp &+= 1
        self.stamps[session] = self.nextStamp
        self.order.append(Entry(session: session, key: key, stamp: self.nextStamp))
        self.compactIfMostlyStale()
    }

    /// Records that `session` came back online or was destroyed. Unknown sessions are ignored.
    mutating func remove(_ session: SessionID) {
        guard self.stamps.removeValue(forKey: session) != nil else { return }
        self.compactIfMostlyStale()
    }

    /// Removes and returns the key of the session offline longest, or `nil` if none is offline.
    mutating func removeOldest() -> ByteKey? {
        while self.head < self.order.count {
            let entry = self.order[self.head]
            self.head += 1
            if self.stamps[entry.session] == entry.stamp {
                self.stamps[entry.session] = nil
                self.compactIfMostlyStale()
                return entry.key
            }
        }
        return nil
    }

    private mutating func compactIfMostlyStale() {
        guard self.order.count > 32, self.order.count > 2 * self.stamps.count else { return }
        let stamps = self.stamps
        self.order = self.order[self.head...].filter { stamps[$0.session] == $0.stamp }
        self.head = 0
    }
}
