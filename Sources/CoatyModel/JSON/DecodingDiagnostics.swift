import Synchronization

/// Counts the decoding errors the model layer creates, including attempts that are thrown and caught
/// internally (such as ``AnyCodable``'s kind probing under a foreign `Decoder`).
///
/// Tests and benchmarks read it to show that decoding valid input throws nothing. It is incremented only
/// on error paths, so it costs nothing on valid input.
public enum DecodingDiagnostics {
    private static let createdErrors = Atomic<Int>(0)

    /// The number of decoding errors created by the model layer since the process started.
    public static var createdErrorCount: Int { Self.createdErrors.load(ordering: .relaxed) }

    static func note() {
        Self.createdErrors.add(1, ordering: .relaxed)
    }
}
