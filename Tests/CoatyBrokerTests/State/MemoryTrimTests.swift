import CoatyBroker
import Testing

struct MemoryTrimTests {
    /// The decisions for a sequence of open-connection counts, as the sweeper reports them.
    private func decisions(_ counts: [Int]) -> [Bool] {
        var trim = MemoryTrim()
        return counts.map { trim.observe(openConnections: $0) }
    }

    @Test func trimsOnceAfterABurstOfConnectionsCloses() {
        // Falling to 1,200 leaves more than half of the peak open; after the trim at 5 the peak restarts
        // from there, so 0 does not trim again, and 300 to 0 is a new burst.
        #expect(
            self.decisions([10, 2_000, 1_200, 5, 0, 300, 0])
                == [false, false, false, true, false, false, true]
        )
    }

    @Test func aSteadyOrSmallLoadNeverTrims() {
        #expect(!self.decisions([100, 200, 50, 250, 0, 255, 0]).contains(true))
        #expect(!self.decisions([1_000, 900, 1_000, 600, 1_000]).contains(true))
    }
}
