import TestSupport
import Testing

@testable import CoatyTLS

/// A client and a server `TLSEngine` whose handshake ran in memory, neither verifying the other: for
/// tests that decide themselves which records each side is fed.
struct MemoryEnginePair {
    let client: TLSEngine
    let server: TLSEngine
    /// The server's context, for calls on its OpenSSL.
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
}
