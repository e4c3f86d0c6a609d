import Testing

@testable import CoatyBroker

/// Which outboxes a reader may claim to write directly at the end of its read.
struct DirectWritesTests {
    @Test func plainStreamsAreAlwaysClaimable() {
        var writes = DirectWrites()
        #expect(writes.admits(encrypting: false))
        writes.includesEncrypting = true
        #expect(writes.admits(encrypting: false))
    }

    /// Encrypting streams only for a read the reactor's thread handles: a burst read by the task
    /// leaves its receivers to their writer tasks, which fill each TLS record with many messages.
    @Test func encryptingStreamsOnlyWhenTheReaderSaysSo() {
        var writes = DirectWrites()
        #expect(!writes.admits(encrypting: true))
        writes.includesEncrypting = true
        #expect(writes.admits(encrypting: true))
    }
}
