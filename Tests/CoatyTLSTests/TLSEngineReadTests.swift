import TestSupport
import Testing

@testable import CoatyTLS

/// `TLSEngine.read(into:)` and `read(maxBytes:)`: they skip OpenSSL when nothing is held, yet never
/// leave decrypted bytes behind; an error some other OpenSSL call left on the thread's queue does not
/// fail a read; a read returns an array the size of what came.
@Suite(.enabled(if: TestCertificates.isAvailable, "needs openssl and libssl3"), .timeLimit(.minutes(1)))
struct TLSEngineReadTests {
    struct UnexpectedEnd: Error {}

    /// Runs `body` with a connected client and server engine on certificates of their own.
    static func withPair(_ body: (MemoryEnginePair) throws -> Void) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        try body(try MemoryEnginePair(certificates))
    }

    @Test func aRecordReadInPiecesSmallerThanItIsGivesEveryByteThenAsksForMore() async throws {
        try await Self.withPair { pair in
            let message = Array("0123456789".utf8)
            pair.server.feed(try pair.client.encrypt([message]))
            // After the first piece the feed is used up and the rest sits in OpenSSL's own buffer.
            var received: [UInt8] = []
            while let piece = try pair.serverRead(capacity: 4) { received += piece }
            #expect(received == message)
            #expect(try pair.serverRead(capacity: 4) == nil)
        }
    }

    @Test func aRecordFedAByteAtATimeDecryptsOnceWhole() async throws {
        try await Self.withPair { pair in
            let record = try pair.client.encrypt([Array("hello".utf8)])
            for byte in record.dropLast() {
                pair.server.feed([byte])
                #expect(try pair.serverRead(capacity: 64) == nil)
            }
            pair.server.feed([record.last!])
            #expect(try pair.serverRead(capacity: 64) == Array("hello".utf8))
            #expect(try pair.serverRead(capacity: 64) == nil)
        }
    }

    @Test func aReadKeepsNoMoreMemoryThanTheBytesThatCame() async throws {
        try await Self.withPair { pair in
            let message = Array("a small message".utf8)
            pair.server.feed(try pair.client.encrypt([message]))
            guard case .data(let bytes) = pair.server.read(maxBytes: 65_536) else {
                Issue.record("no data")
                return
            }
            let capacity = bytes.capacity
            #expect(bytes == message)
            #expect(capacity < 1_024)
        }
    }

    @Test func aLargeMessageComesARecordAtATime() async throws {
        try await Self.withPair { pair in
            let message = (0..<40_000).map { UInt8(truncatingIfNeeded: $0) }
            pair.server.feed(try pair.client.encrypt([message]))
            var received: [UInt8] = []
            var largest = 0
            while case .data(let bytes) = pair.server.read(maxBytes: 65_536) {
                largest = max(largest, bytes.count)
                received += bytes
            }
            #expect(received == message)
            #expect(largest <= TLSEngine.recordPlaintextLimit)
        }
    }

    @Test func anErrorAnotherCallLeftQueuedDoesNotFailARead() async throws {
        try await Self.withPair { pair in
            let openssl = pair.serverContext.openssl
            let record = try pair.client.encrypt([Array("after an error".utf8)])
            // A call that fails leaves its error on this thread's queue.
            #expect(openssl.SSL_CTX_use_certificate(pair.serverContext.context, nil) != 1)
            #expect(openssl.ERR_peek_error() != 0)
            // Half a record: OpenSSL is asked, and must answer "more input", not the stale error.
            pair.server.feed(Array(record.prefix(record.count / 2)))
            #expect(try pair.serverRead(capacity: 64) == nil)
            pair.server.feed(Array(record.dropFirst(record.count / 2)))
            #expect(try pair.serverRead(capacity: 64) == Array("after an error".utf8))
            openssl.clearErrors()
        }
    }
}

extension MemoryEnginePair {
    /// The server's next read into a buffer of `capacity` bytes: the bytes, or `nil` for
    /// `needsInput`; any other outcome fails the test.
    func serverRead(capacity: Int) throws -> [UInt8]? {
        var outcome: TLSEngine.ReadStep.Counted = .needsInput
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            outcome = self.server.read(into: UnsafeMutableRawBufferPointer(buffer))
            initialized = 0
            if case .data(let count) = outcome { initialized = count }
        }
        switch outcome {
        case .data: return bytes
        case .needsInput: return nil
        case .end: throw TLSEngineReadTests.UnexpectedEnd()
        case .failed(let error): throw error
        }
    }
}
