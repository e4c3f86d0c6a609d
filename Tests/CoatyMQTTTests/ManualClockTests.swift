import TestSupport
import Testing

/// The test clock's own waits: they end when their sleepers come, and when their task is cancelled,
/// so a suite's time limit can end a test whose code under test never goes to sleep.
@Suite(.timeLimit(.minutes(1)))
struct ManualClockTests {
    @Test func aWaitForSleepersEndsOnceThatManySleep() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(1))) }
        await clock.waitForSleepers(count: 1)
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        try await sleeper.value
    }

    @Test func aWaitForSleepersThatNeverComeEndsWhenItsTaskIsCancelled() async {
        let clock = ManualClock()
        let wait = Task { await clock.waitForSleepers(count: 1) }
        wait.cancel()
        await wait.value
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await clock.waitForSleepers(count: 1)
        }
        await cancelledFirst.value
        #expect(clock.sleeperCount == 0)
    }
}
