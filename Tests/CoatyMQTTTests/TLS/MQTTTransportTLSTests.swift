import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyModel
import CoatyTLS
import CoatyTransport
import Foundation
import TestSupport
import Testing

/// Our client against mosquitto's TLS listeners, with certificates made for the run: connects and
/// works with a trusted certificate, and refuses each bad one with its own error.
@Suite(
    .enabled(if: Mosquitto.isAvailable && TestCertificates.isAvailable, "needs mosquitto, openssl and libssl3"),
    .timeLimit(.minutes(2))
)
struct MQTTTransportTLSTests {
    /// Runs `body` with fresh certificates and a mosquitto TLS listener presenting `certificate`.
    private func withTLSMosquitto(
        certificate: String = "server",
        requiresClientCertificate: Bool = false,
        _ body: (TestCertificates, _ port: Int) async throws -> Void
    ) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        var options = Self.listenerOptions(certificates, certificate: certificate)
        if requiresClientCertificate {
            options += ["cafile \(certificates.caFile)", "require_certificate true"]
        }
        try await Mosquitto.withRunning(listenerOptions: options) { broker in
            try await body(certificates, broker.port)
        }
    }

    /// mosquitto.conf lines for a TLS listener presenting `certificate`.
    private static func listenerOptions(_ certificates: TestCertificates, certificate: String = "server") -> [String] {
        ["certfile \(certificates.path("\(certificate).pem"))", "keyfile \(certificates.path("\(certificate).key"))"]
    }

    private func transport(_ url: String, tls: MQTTTransport.TLSOptions) -> MQTTTransport {
        MQTTTransport(configuration: .init(brokerURL: url, connectTimeout: .seconds(10), tls: tls))
    }

    /// Connects, subscribes and receives its own QoS 1 message over `transport`.
    private func roundTrip(_ transport: MQTTTransport) async throws {
        let inbox = Inbox()
        try await transport.withMQTTConnection(.init(clientID: "tls-\(UUID())"), onMessage: inbox.onMessage) {
            connection in
            try await connection.subscribe(to: [TopicFilter("tls/test")], qos: .atLeastOnce)
            try await connection.publish(
                TransportMessage(topic: "tls/test", payload: Array("secret".utf8), qos: .atLeastOnce)
            )
            let received = await inbox.next(1)
            #expect(received.map(\.payload) == [Array("secret".utf8)])
        }
    }

    @Test(arguments: ["127.0.0.1", "localhost"])
    func connectsWithTrustedCertificate(host: String) async throws {
        try await self.withTLSMosquitto { certificates, port in
            let tls = MQTTTransport.TLSOptions(trustedCertificates: .file(certificates.caFile))
            try await self.roundTrip(self.transport("mqtts://\(host):\(port)", tls: tls))
        }
    }

    @Test func trustsInMemoryPEM() async throws {
        try await self.withTLSMosquitto { certificates, port in
            let pem = try String(contentsOfFile: certificates.caFile, encoding: .utf8)
            let tls = MQTTTransport.TLSOptions(trustedCertificates: .text(pem), allowsTLS12: false)
            try await self.roundTrip(self.transport("mqtts://127.0.0.1:\(port)", tls: tls))
        }
    }

    /// Two managers over mqtts: every Call gets its Return.
    @Test func callAndReturnBetweenManagers() async throws {
        try await self.withTLSMosquitto { certificates, port in
            let tls = MQTTTransport.TLSOptions(trustedCertificates: .file(certificates.caFile))
            try await withCallerAndCallee(over: self.transport("mqtts://127.0.0.1:\(port)", tls: tls)) {
                caller,
                callee in
                let registration = try await callee.handleCalls("com.example.square") { call in
                    let value = call.parameter(at: 0)?.intValue ?? 0
                    try call.returnResult(.int(value * value))
                }
                var results: [Int] = []
                for value in 0..<10 {
                    let reply = try await caller.call(
                        CallEvent(operation: "com.example.square", parameters: [.int(value)])
                    )
                    .first(timeout: .seconds(10))
                    results.append(reply.result?.intValue ?? -1)
                }
                registration.cancel()
                #expect(results == (0..<10).map { $0 * $0 })
            }
        }
    }

    /// The TLS error under a failed connect.
    private func connectFailure(_ transport: MQTTTransport) async -> TLSError? {
        do {
            try await transport.withConnection(.init(clientID: "refused"), onMessage: { _ in }) { _ in }
            Issue.record("connected although the certificate is bad")
            return nil
        } catch let error as TransportError {
            #expect(error.code == .connectFailed)
            return error.underlying as? TLSError
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test(
        arguments: [
            ("self-signed", "is not trusted: self-signed"),
            ("expired", "expired on"),
            ("other-host", "host name mismatch: the certificate is for other.example, not 127.0.0.1"),
        ]
    )
    func refusesBadCertificate(certificate: String, expected: String) async throws {
        try await self.withTLSMosquitto(certificate: certificate) { certificates, port in
            let tls = MQTTTransport.TLSOptions(trustedCertificates: .file(certificates.caFile))
            let error = await self.connectFailure(self.transport("mqtts://127.0.0.1:\(port)", tls: tls))
            #expect(error?.code == .certificateRejected)
            #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
        }
    }

    /// A CA that is not in the system's trust store (the default) is refused.
    @Test func refusesUnknownCAWithSystemTrustStore() async throws {
        try await self.withTLSMosquitto { _, port in
            let error = await self.connectFailure(self.transport("mqtts://127.0.0.1:\(port)", tls: .init()))
            #expect(error?.code == .certificateRejected)
            #expect(error?.message.contains("its issuer is not a trusted CA") == true, "\(String(describing: error))")
        }
    }

    /// Only the named option turns verification off; then a self-signed certificate is accepted.
    @Test func disabledVerificationAcceptsSelfSigned() async throws {
        try await self.withTLSMosquitto(certificate: "self-signed") { _, port in
            let tls = MQTTTransport.TLSOptions(certificateVerification: .disabled)
            try await self.roundTrip(self.transport("mqtts://127.0.0.1:\(port)", tls: tls))
        }
    }

    @Test func brokerRequiringClientCertificate() async throws {
        try await self.withTLSMosquitto(requiresClientCertificate: true) { certificates, port in
            let url = "mqtts://127.0.0.1:\(port)"
            // Without a certificate: refused, and the error says why.
            do {
                try await self.transport(url, tls: .init(trustedCertificates: .file(certificates.caFile)))
                    .withConnection(.init(clientID: "no-cert"), onMessage: { _ in }) { _ in }
                Issue.record("connected without the required client certificate")
            } catch let error as TransportError {
                #expect("\(error)".contains("requires a client certificate"), "\(error)")
            }
            // With one: works.
            let tls = MQTTTransport.TLSOptions(
                trustedCertificates: .file(certificates.caFile),
                clientCertificate: .file(certificates.path("client.pem")),
                clientKey: .file(certificates.path("client.key"))
            )
            try await self.roundTrip(self.transport(url, tls: tls))
        }
    }

    /// Over TLS a manager reconnects as over TCP: the broker goes away and comes back on the same
    /// port, and the manager is online again.
    @Test func managerReconnectsAfterTheBrokerRestarts() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let port = try Mosquitto.freePort()
        let options = Self.listenerOptions(certificates)
        var broker = try await Mosquitto.start(port: port, listenerOptions: options)
        defer { Mosquitto.kill(broker) }
        let manager = CommunicationManager(
            transport: self.transport(
                "mqtts://localhost:\(port)",
                tls: .init(trustedCertificates: .file(certificates.caFile))
            ),
            configuration: .init(identity: Identity(name: "reconnecting"), initialReconnectDelay: .milliseconds(100))
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            var states = manager.observeCommunicationState().makeAsyncIterator()
            group.addTask { try await manager.run() }
            while await states.next() != .online {}
            Mosquitto.kill(broker)
            while await states.next() != .offline {}
            broker = try await Mosquitto.start(port: port, listenerOptions: options)
            while await states.next() != .online {}
            manager.finish()
            try await group.waitForAll()
        }
    }

    @Test func missingCAFileIsAConfigurationError() async throws {
        let tls = MQTTTransport.TLSOptions(trustedCertificates: .file("/nonexistent/ca.pem"))
        let port = try LoopbackPort.unused()
        let error = await self.connectFailure(self.transport("mqtts://127.0.0.1:\(port)", tls: tls))
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message == "cannot read /nonexistent/ca.pem")
    }
}
