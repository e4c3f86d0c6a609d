import CoatySockets
import CoatyTLS
import TestSupport
import Testing

/// `TLSConnection` and `TLSContext` on their own: versions against `openssl s_server`, and
/// configurations that cannot work.
@Suite(
    .enabled(if: TestCertificates.isAvailable, "needs openssl and libssl3"),
    .timeLimit(.minutes(1))
)
struct TLSConnectionTests {
    /// Runs `body` with an `openssl s_server` limited to TLS 1.2, on a free port.
    private func withTLS12Server(
        _ body: (TestCertificates, _ port: Int) async throws -> Void
    ) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let port = try LoopbackPort.unused()
        let server = try ChildProcess.spawn(
            try #require(TestCertificates.opensslPath),
            [
                "s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificates.path("server.pem"), "-key",
                certificates.path("server.key"), "-tls1_2", "-quiet",
            ],
            input: .pipe
        )
        defer {
            server.kill()
            server.waitUntilExit()
        }
        try await Mosquitto.waitUntilListening(port: port, process: server)
        try await body(certificates, port)
    }

    private func clientContext(_ certificates: TestCertificates, allowsTLS12: Bool = true) throws -> TLSContext {
        try TLSContext(
            TLSConfiguration(
                role: .client,
                peerVerification: .required,
                trustedCertificates: .file(certificates.caFile),
                allowsTLS12: allowsTLS12
            )
        )
    }

    @Test func negotiatesTLS12WithATLS12Server() async throws {
        try await self.withTLS12Server { certificates, port in
            let connection = try await TLSConnection.connect(
                host: "127.0.0.1",
                port: port,
                context: try self.clientContext(certificates)
            )
            defer { connection.close() }
            #expect(connection.version == "TLSv1.2")
        }
    }

    @Test func refusesTLS12WhenOnlyTLS13IsAllowed() async throws {
        try await self.withTLS12Server { certificates, port in
            let error = await #expect(throws: TLSError.self) {
                let connection = try await TLSConnection.connect(
                    host: "127.0.0.1",
                    port: port,
                    context: try self.clientContext(certificates, allowsTLS12: false)
                )
                connection.close()
            }
            #expect(error?.message.contains("no TLS version in common") == true, "\(String(describing: error))")
        }
    }

    @Test func keyThatDoesNotMatchItsCertificate() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let error = #expect(throws: TLSError.self) {
            _ = try TLSContext(
                TLSConfiguration(
                    role: .server,
                    peerVerification: .none,
                    certificateChain: .file(certificates.path("server.pem")),
                    privateKey: .file(certificates.path("client.key"))
                )
            )
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("does not match the certificate") == true, "\(String(describing: error))")
    }

    @Test func textWithoutCertificates() {
        let error = #expect(throws: TLSError.self) {
            _ = try TLSContext(
                TLSConfiguration(role: .client, peerVerification: .required, trustedCertificates: .text("not PEM"))
            )
        }
        #expect(error?.message == "no CA certificates in the PEM text given")
    }
}
