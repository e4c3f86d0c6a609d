import Testing

@testable import CoatyBroker

struct OfflineSessionsTests {
    private func id(_ value: UInt64) -> SessionID { SessionID(rawValue: value) }

    @Test func oldestIsTakenFirstAndReturnsSkipStaleEntries() {
        var offline = OfflineSessions()
        offline.append(id(1), key: [1])
        offline.append(id(2), key: [2])
        offline.append(id(3), key: [3])
        offline.remove(id(1))  // came back online
        offline.append(id(1), key: [1])  // and went offline again: now the newest
        offline.remove(id(9))  // unknown: ignored
        #expect(offline.count == 3)
        #expect(offline.removeOldest() == [2])
        #expect(offline.removeOldest() == [3])
        #expect(offline.removeOldest() == [1])
        #expect(offline.removeOldest() == nil)
        #expect(offline.count == 0)
    }

    @Test func storedEntriesStayProportionalToOfflineSessions() {
        var offline = OfflineSessions()
        offline.append(id(0), key: [0])
        for round in 1...100_000 {
            // One session goes offline and another comes back, so only a few are ever offline.
            let session = UInt64(round % 7)
            offline.remove(id(session))
            offline.append(id(session), key: [UInt8(session)])
            if round.isMultiple(of: 3) { _ = offline.removeOldest() }
            #expect(offline.storedEntries <= max(33, 2 * offline.count + 1))
        }
    }
}
