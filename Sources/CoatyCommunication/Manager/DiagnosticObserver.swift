import Synchronization

/// One observer of a manager's diagnostics (``CommunicationManager/observeDiagnostics()``), which
/// never loses a diagnostic silently.
///
/// When the consumer falls behind and its buffer is full, a new diagnostic is not buffered but
/// counted; the next one that fits carries the count in ``CommunicationDiagnostic/skipped``, and a
/// count still pending when the stream finishes goes out as a last diagnostic of kind
/// ``CommunicationDiagnostic/Kind/skippedDiagnostics``. (Every diagnostic is logged as well.)
final class DiagnosticObserver: Sendable {
    let continuation: EventStream<CommunicationDiagnostic>.Continuation
    /// Diagnostics refused since the last one delivered.
    private let skipped = Mutex(0)

    init(_ continuation: EventStream<CommunicationDiagnostic>.Continuation) {
        self.continuation = continuation
    }

    /// Hands `diagnostic` to the consumer with the count of those skipped before it, or counts it.
    func yield(_ diagnostic: CommunicationDiagnostic) {
        self.skipped.withLock { skipped in
            var diagnostic = diagnostic
            diagnostic.skipped = skipped
            if case .dropped = self.continuation.channel.yieldIfRoom(diagnostic) {
                skipped += 1
            } else {
                skipped = 0
            }
        }
    }

    /// Reports a pending count of skipped diagnostics, then finishes the stream.
    func finish() {
        let skipped = self.skipped.withLock { skipped in
            defer { skipped = 0 }
            return skipped
        }
        if skipped > 0 {
            var diagnostic = CommunicationDiagnostic(
                kind: .skippedDiagnostics,
                topic: "",
                reason: "\(skipped) diagnostics skipped: the consumer fell behind (all were logged)"
            )
            diagnostic.skipped = skipped
            if case .dropped = self.continuation.channel.yieldIfRoom(diagnostic) {
                // Still full: this one replaces the oldest buffered diagnostic, which it counts too.
                diagnostic.skipped += 1
                diagnostic.reason =
                    "\(diagnostic.skipped) diagnostics skipped: the consumer fell behind (all were logged)"
                self.continuation.yield(diagnostic)
            }
        }
        self.continuation.finish()
    }
}
