public import CoatyCommunication
import Synchronization

/// Collects a manager's diagnostics in memory while a scoped body runs, for assertions in tests.
public final class DiagnosticsCollector: Sendable {
    private let storage = Mutex<[CommunicationDiagnostic]>([])
    private let arrivals: AsyncStream<CommunicationDiagnostic>
    private let continuation: AsyncStream<CommunicationDiagnostic>.Continuation

    /// Creates an empty collector.
    public init() {
        (self.arrivals, self.continuation) = AsyncStream<CommunicationDiagnostic>.makeStream()
    }

    /// The diagnostics collected so far, oldest first.
    public var diagnostics: [CommunicationDiagnostic] { self.storage.withLock { $0 } }

    /// Collects `manager`'s diagnostics while `body` runs.
    ///
    /// Subscribes before `body` starts and stops collecting when it returns.
    public func collect<Result: Sendable>(
        from manager: CommunicationManager,
        _ body: () async throws -> Result
    ) async throws -> Result {
        let stream = manager.observeDiagnostics()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await diagnostic in stream {
                    self.storage.withLock { $0.append(diagnostic) }
                    self.continuation.yield(diagnostic)
                }
            }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    /// Waits for the next diagnostic that satisfies `predicate` (collected from now on or already
    /// queued for this waiter). Returns `nil` if the task is cancelled.
    public func next(where predicate: @Sendable (CommunicationDiagnostic) -> Bool = { _ in true }) async
        -> CommunicationDiagnostic?
    {
        for await diagnostic in self.arrivals where predicate(diagnostic) { return diagnostic }
        return nil
    }
}
