import TestSupport
import Testing

@testable import CoatyTLS

/// `TLSEngine.read(into:)`: it skips OpenSSL when nothing is held, yet never leaves decrypted bytes
/// behind, and an error some other OpenSSL call left on the thread's queue does not fail a read.
@Suite(.enabled(if: TestCertificates.isAvailable, "needs openssl and libssl3"), .timeLimit(.minutes(1)))
struct TLSEngineReadTests {
    /// A server and a client engine after a handshake in memory.
    struct Pair {
        let server: TLSEngine
        let client: TLSEngine
        let serverContext: TLSContext

        init(_ certificates: TestCertificates) throws {
            self.serverContext = try TLSContext(
                TLSConfiguration(
                    role: .server,
                    peerVerification: .none,
                    certificateChain: .file(certificates.path("server.pem")),
                    privateKey: .file(certificates.path("server.key"))
                )
            )
            self.server = try TLSEngine(context: self.serverContext, peerName: "pair")
            self.client = try TLSEngine(
                context: TLSContext(TLSConfiguration(role: .client, peerVerification: .none)),
                peerName: "localhost"
            )
            var done = (client: false, server: false)
            for _ in 0..<20 where !(done.client && done.server) {
                switch self.client.handshake() {
                case .done(let output): done.client = true; self.server.feed(output)
                case .needsInput(let output): self.server.feed(output)
                case .failed(let error, _): throw error
                }
                switch self.server.handshake() {
                case .done(let output): done.server = true; self.client.feed(output)
                case .needsInput(let output): self.client.feed(output)
                case .failed(let error, _): throw error
                }
            }
            try #require(done.client && done.server)
        }

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
            case .end: throw UnexpectedEnd()
            case .failed(let error): throw error
            }
        }
    }

    struct UnexpectedEnd: Error {}

    @Test func aRecordReadInPiecesSmallerThanItIsGivesEveryByteThenAsksForMore() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let pair = try Pair(certificates)
        let message = Array("0123456789".utf8)
        pair.server.feed(try pair.client.encrypt([message]))
        // After the first piece the feed is used up and the rest sits in OpenSSL's own buffer.
        var received: [UInt8] = []
        while let piece = try pair.serverRead(capacity: 4) { received += piece }
        #expect(received == message)
        #expect(try pair.serverRead(capacity: 4) == nil)
    }

    @Test func aRecordFedAByteAtATimeDecryptsOnceWhole() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let pair = try Pair(certificates)
        let record = try pair.client.encrypt([Array("hello".utf8)])
        for byte in record.dropLast() {
            pair.server.feed([byte])
            #expect(try pair.serverRead(capacity: 64) == nil)
        }
        pair.server.feed([record.last!])
        #expect(try pair.serverRead(capacity: 64) == Array("hello".utf8))
        #expect(try pair.serverRead(capacity: 64) == nil)
    }

    @Test func anErrorAnotherCallLeftQueuedDoesNotFailARead() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let pair = try Pair(certificates)
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
