import Synchronization
import Testing

@testable import CoatyWebSocket

/// The writers' lock on its own: exclusion, hand-over in order, a cancelled waiter skipped, and close.
@Suite(.timeLimit(.minutes(1)))
struct WriteLockTests {
    struct Closed: Error {}

    /// The names of the tasks that held the lock, in the order they held it.
    final class Holders: Sendable {
        let names = Mutex<[String]>([])
    }

    /// Gives way until `count` tasks wait for the lock.
    private static func waitForWaiters(_ count: Int, on lock: WriteLock) async {
        while lock.waiterCount < count && !Task.isCancelled { await Task.yield() }
    }

    @Test func theLockIsHandedToWaitersInOrder() async throws {
        let lock = WriteLock()
        try await lock.lock(closedError: Closed())
        #expect(!lock.tryLock())
        let order = Holders()
        try await withThrowingTaskGroup { group in
            for (index, name) in ["a", "b", "c"].enumerated() {
                group.addTask {
                    try await lock.lock(closedError: Closed())
                    order.names.withLock { $0.append(name) }
                    lock.unlock()
                }
                // One at a time, so the queue's order is known.
                await Self.waitForWaiters(index + 1, on: lock)
            }
            lock.unlock()
            try await group.waitForAll()
        }
        #expect(order.names.withLock { $0 } == ["a", "b", "c"])
        #expect(lock.tryLock(), "the last holder released the lock")
    }

    @Test func aCancelledWaiterIsSkippedAndThrows() async throws {
        let lock = WriteLock()
        try await lock.lock(closedError: Closed())
        let cancelled = Task {
            try await lock.lock(closedError: Closed())
        }
        await Self.waitForWaiters(1, on: lock)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        lock.unlock()
        #expect(lock.tryLock(), "nobody took the lock in the cancelled waiter's place")
    }

    @Test func closeFailsWaitersAndLaterCalls() async throws {
        let lock = WriteLock()
        try await lock.lock(closedError: Closed())
        let waiter = Task { try await lock.lock(closedError: Closed()) }
        await Self.waitForWaiters(1, on: lock)
        lock.close(Closed())
        await #expect(throws: Closed.self) { try await waiter.value }
        await #expect(throws: Closed.self) { try await lock.lock(closedError: Closed()) }
        #expect(!lock.tryLock())
    }
}
