import CoatyCore
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1)))
struct WaiterRegistryTests {
    private struct Failure: Error, Equatable {}

    @Test func aResumeWakesItsWaiter() async throws {
        let registry = WaiterRegistry()
        let token = registry.makeToken()
        async let waited: Void = registry.wait(token)
        await Self.waitUntil { registry.count == 1 }
        #expect(registry.resume(token))
        try await waited
        #expect(registry.count == 0)
    }

    @Test func aResumeBeforeTheWaitIsKeptAndReturnedAtOnce() async throws {
        let registry = WaiterRegistry()
        let token = registry.makeToken()
        #expect(registry.resume(token))
        #expect(registry.count == 0)
        try await registry.wait(token)
        #expect(!registry.resume(token))
    }

    @Test func aTokenIsResumedOnlyOnce() async throws {
        let registry = WaiterRegistry()
        let token = registry.makeToken()
        #expect(registry.resume(token, throwing: Failure()))
        #expect(!registry.resume(token))
        await #expect(throws: Failure.self) { try await registry.wait(token) }
        #expect(!registry.resume(token))
    }

    @Test func aFailureIsThrownToTheWaiter() async {
        let registry = WaiterRegistry()
        let token = registry.makeToken()
        registry.resume(token, throwing: Failure())
        await #expect(throws: Failure.self) { try await registry.wait(token) }
    }

    @Test func cancellingAWaiterThrowsRunsOnCancelOnceAndRefusesLaterResumes() async {
        let registry = WaiterRegistry()
        let token = registry.makeToken()
        let cancels = Atomic<Int>(0)
        let waiter = Task {
            try await registry.wait(token, onCancel: { cancels.add(1, ordering: .relaxed) })
        }
        await Self.waitUntil { registry.count == 1 }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(cancels.load(ordering: .relaxed) == 1)
        #expect(!registry.resume(token))
        #expect(registry.count == 0)
    }

    @Test func aWaitBegunInACancelledTaskEndsAtOnceAndRunsOnCancel() async {
        let registry = WaiterRegistry()
        let token = registry.makeToken()
        let cancels = Atomic<Int>(0)
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await registry.wait(token, onCancel: { cancels.add(1, ordering: .relaxed) })
        }
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(cancels.load(ordering: .relaxed) == 1)
        #expect(!registry.resume(token))
    }

    @Test func anOutcomeKeptBeforeCancellationWins() async throws {
        let registry = WaiterRegistry()
        let token = registry.makeToken()
        registry.resume(token, throwing: Failure())
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await registry.wait(token)
        }
        await #expect(throws: Failure.self) { try await waiter.value }
    }

    @Test func resumeAllWakesEveryWaiterButKeepsEarlyOutcomes() async throws {
        let registry = WaiterRegistry()
        let first = registry.makeToken()
        let second = registry.makeToken()
        let early = registry.makeToken()
        registry.resume(early)
        let one = Task { try await registry.wait(first) }
        let two = Task { try await registry.wait(second) }
        await Self.waitUntil { registry.count == 2 }
        registry.resumeAll(with: .failure(Failure()))
        await #expect(throws: Failure.self) { try await one.value }
        await #expect(throws: Failure.self) { try await two.value }
        try await registry.wait(early)
    }

    @Test func aDiscardedTokenCannotBeResumedOrWaitedOn() async {
        let registry = WaiterRegistry()
        let token = registry.makeToken()
        registry.discard(token)
        #expect(!registry.resume(token))
        await #expect(throws: WaiterRegistryMisuse.self) { try await registry.wait(token) }
    }

    @Test func tokensAreUnique() {
        let registry = WaiterRegistry()
        let tokens = (0..<100).map { _ in registry.makeToken() }
        #expect(Set(tokens).count == 100)
    }

    @Test func anEndedTokenDoesNotReachTheTokenIssuedAfterIt() async throws {
        let registry = WaiterRegistry()
        let first = registry.makeToken()
        registry.discard(first)
        let second = registry.makeToken()
        #expect(second != first)
        // The ended token neither resumes nor waits on the new one.
        #expect(!registry.resume(first, throwing: Failure()))
        await #expect(throws: WaiterRegistryMisuse.self) { try await registry.wait(first) }
        #expect(registry.resume(second))
        try await registry.wait(second)
        // Tokens ended in every way leave later ones alone.
        let waited = registry.makeToken()
        async let wait: Void = registry.wait(waited)
        await Self.waitUntil { registry.count == 1 }
        registry.resume(waited)
        try await wait
        let third = registry.makeToken()
        #expect(!registry.resume(waited))
        #expect(!registry.resume(second))
        registry.discard(waited)
        registry.discard(second)
        #expect(registry.resume(third))
        try await registry.wait(third)
    }

    /// Waits until `condition` holds (a waiter is suspended in the registry), giving way to other
    /// tasks between checks; the suite's time limit ends it if the state is never reached.
    private static func waitUntil(_ condition: () -> Bool) async {
        while !condition() && !Task.isCancelled { await Task.yield() }
    }
}
