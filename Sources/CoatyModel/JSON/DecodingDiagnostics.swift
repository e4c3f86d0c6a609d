import Synchronization

/// Counts the decoding errors the model layer creates, including attempts that are thrown and caught
/// internally (such as ``AnyCodable``'s kind probing under a foreign `Decoder`).
///
/// Tests and benchmarks use it to show that decoding valid input throws nothing. It is touched only on
/// error paths, so it costs nothing on valid input.
///
/// Prefer ``countingErrors(in:)`` over comparing ``createdErrorCount`` before and after: the process-wide
/// count also sees errors that other tasks create at the same time, so a before/after difference is only
/// meaningful when nothing else decodes concurrently.
package enum DecodingDiagnostics {
    private static let createdErrors = Atomic<Int>(0)

    /// The tally of the innermost ``countingErrors(in:)`` scope of the current task, if any.
    @TaskLocal private static var scopeTally: Tally?

    /// The number of decoding errors created by the model layer since the process started, in any task.
    package static var createdErrorCount: Int { Self.createdErrors.load(ordering: .relaxed) }

    /// Runs `body` and counts the decoding errors created while it runs, in the current task only
    /// (including errors that were thrown and caught inside `body`).
    ///
    /// - Returns: `body`'s result and the number of decoding errors it created.
    package static func countingErrors<Result>(
        in body: () throws -> Result
    ) rethrows -> (result: Result, createdErrors: Int) {
        let tally = Tally()
        let result = try Self.$scopeTally.withValue(tally) { try body() }
        return (result, tally.count.load(ordering: .relaxed))
    }

    static func note() {
        Self.createdErrors.add(1, ordering: .relaxed)
        Self.scopeTally?.count.add(1, ordering: .relaxed)
    }

    private final class Tally: Sendable {
        let count = Atomic<Int>(0)
    }
}
