import CoatyBroker
import CoatyCommunication
import CoatyMQTT
import CoatyModel
import TestSupport
import Testing

@testable import CoatyCLI

/// The TLS options of `coaty broker` and the client subcommands, parsed and used end to end.
@Suite(.timeLimit(.minutes(1)))
struct TLSOptionsTests {
    @Test func brokerTLSListenerOptions() throws {
        let command = try Command(parsing: [
            "broker", "--tls-port", "0", "--cert", "s.pem", "--key", "s.key", "--cafile", "ca.pem",
            "--require-certificate",
        ])
        guard case .broker(let options) = command else {
            Issue.record("not a broker command: \(command)")
            return
        }
        #expect(
            try options.tls.listener()
                == MQTTBroker.TLSListener(
                    port: 0,
                    certificateFile: "s.pem",
                    keyFile: "s.key",
                    caFile: "ca.pem",
                    requiresClientCertificate: true
                )
        )
    }

    @Test func clientTLSOptions() throws {
        var expected = MonitorOptions()
        expected.connection.broker = "mqtts://broker.example"
        expected.connection.tls = ClientTLSOptions(caFile: "ca.pem", certificateFile: "c.pem", keyFile: "c.key")
        #expect(
            try Command(parsing: [
                "monitor", "-b", "mqtts://broker.example", "--cafile", "ca.pem", "--cert", "c.pem", "--key", "c.key",
            ]) == .monitor(expected)
        )
    }

    /// TLS options apply to the TLS brokers among several to fail over between, `wss://` included.
    @Test func tlsOptionsWithASecureBrokerAmongSeveral() throws {
        var expected = DiscoverOptions()
        expected.connection.brokers = ["mqtt://a", "wss://b/mqtt"]
        expected.connection.tls.isInsecure = true
        #expect(
            try Command(parsing: ["discover", "-b", "mqtt://a", "-b", "wss://b/mqtt", "--insecure"])
                == .discover(expected)
        )
    }

    @Test(arguments: [
        (["broker", "--tls-port", "0"], "'--tls-port' needs '--cert' and '--key'"),
        (
            ["broker", "--cert", "s.pem"],
            "'--wss-port', '--cert', '--key', '--cafile' and '--require-certificate' need '--tls-port'"
        ),
        (
            ["broker", "--tls-port", "0", "--cert", "s", "--key", "k", "--require-certificate"],
            "'--require-certificate' needs '--cafile' to check the certificates"
        ),
        (["broker", "--tls-port", "x"], "'--tls-port' must be a number from 0 to 65535, not 'x'"),
        (
            ["monitor", "--insecure"],
            "'--cafile', '--cert', '--key' and '--insecure' are for an mqtts:// or wss:// broker, not 'mqtt://127.0.0.1:1883'"
        ),
        (["discover", "-b", "mqtts://h", "--cert", "c.pem"], "'--cert' and '--key' go together"),
    ])
    func usageErrors(arguments: [String], message: String) {
        let error = #expect(throws: UsageError.self) { try Command(parsing: arguments) }
        #expect(error?.message == message)
    }

    /// `coaty discover --broker mqtts://… --cafile` finds an agent through a broker started with the
    /// options of `coaty broker --tls-port`.
    @Test(.enabled(if: TestCertificates.isAvailable, "needs openssl and libssl3"))
    func discoverOverTLS() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        guard
            case .broker(let brokerOptions) = try Command(parsing: [
                "broker", "--tls-port", "0", "--cert", certificates.path("server.pem"), "--key",
                certificates.path("server.key"),
            ])
        else {
            Issue.record("not a broker command")
            return
        }
        let configuration = MQTTBroker.Configuration(tls: try brokerOptions.tls.listener())
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            let url = "mqtts://127.0.0.1:\(try #require(broker.tlsPort))"
            guard
                case .discover(let options) = try Command(parsing: [
                    "discover", "-b", url, "--cafile", certificates.caFile, "--timeout", "3",
                ])
            else {
                Issue.record("not a discover command")
                return
            }
            let agent = CommunicationManager(
                transport: try TransportFactory.make(options.connection),
                configuration: .init(identity: Identity(name: "Lamp"))
            )
            try await withThrowingTaskGroup(of: Void.self) { group in
                let states = agent.observeCommunicationState()
                group.addTask { try await agent.run() }
                _ = await states.first { $0 == .online }
                let found = try await DiscoverCommand.run(
                    options,
                    transport: try TransportFactory.make(options.connection)
                ) {
                    _ in
                }
                #expect(found == 1)
                agent.finish()
                try await group.waitForAll()
            }
        }
    }
}
