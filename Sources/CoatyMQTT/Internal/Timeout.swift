import CoatyCore

/// Runs `operation`, throwing `timeoutError()` if it does not finish within `duration` on `clock`.
///
/// The operation is cancelled when the time runs out.
func withTimeout<Value: Sendable>(
    _ duration: Duration,
    clock: ElapsedClock,
    timeoutError: @escaping @Sendable () -> any Error,
    _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let deadline = clock.now + duration
    return try await withThrowingTaskGroup(of: Value?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await clock.sleep(until: deadline)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw CancellationError() }
        guard let value = first else { throw timeoutError() }
        return value
    }
}
