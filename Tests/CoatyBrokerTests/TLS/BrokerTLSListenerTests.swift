import CoatyBroker
import CoatyCore
import CoatyMQTT
import CoatySockets
import CoatyTransport
import Foundation
import TestSupport
import Testing

/// The broker's TLS listener with real TLS clients: mosquitto_pub/mosquitto_sub, paho-mqtt and our
/// own transport; client certificates; and input that is not TLS.
@Suite(
    .enabled(if: TestCertificates.isAvailable, "needs openssl and libssl3"),
    .timeLimit(.minutes(1))
)
struct BrokerTLSListenerTests {
    static let mosquittoPub = "/usr/bin/mosquitto_pub"
    static let mosquittoSub = "/usr/bin/mosquitto_sub"
    static var hasMosquittoClients: Bool { FileManager.default.isExecutableFile(atPath: Self.mosquittoSub) }

    /// Runs `body` with fresh certificates and a broker with a TLS listener on a free port.
    private func withTLSBroker(
        requiresClientCertificate: Bool = false,
        webSocketPort: Int? = nil,
        _ body: (MQTTBroker, _ tlsPort: Int, TestCertificates) async throws -> Void
    ) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let tls = MQTTBroker.TLSListener(
            port: 0,
            certificateFile: certificates.path("server.pem"),
            keyFile: certificates.path("server.key"),
            caFile: requiresClientCertificate ? certificates.caFile : nil,
            requiresClientCertificate: requiresClientCertificate,
            webSocketPort: webSocketPort
        )
        try await MQTTBroker.withRunning(configuration: .init(tls: tls)) { broker in
            try await body(broker, try #require(broker.tlsPort), certificates)
        }
    }

    /// mosquitto_sub waits for one message on `topic` over TLS; returns once it has subscribed.
    private func subscribe(
        port: Int,
        topic: String,
        arguments: [String],
        broker: MQTTBroker,
        group: inout ThrowingTaskGroup<ProcessResult, any Error>
    ) async {
        let events = broker.events()
        group.addTask {
            try await runProcess(
                Self.mosquittoSub,
                ["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-C", "1", "-W", "10", "-i", "tls-sub"] + arguments
            )
        }
        _ = await events.first {
            if case .subscribed("tls-sub", _) = $0 { true } else { false }
        }
    }

    @Test(.enabled(if: Self.hasMosquittoClients, "needs mosquitto-clients"))
    func mosquittoClientsWithCAFile() async throws {
        try await self.withTLSBroker { broker, port, certificates in
            try await withThrowingTaskGroup(of: ProcessResult.self) { group in
                let tls = ["--cafile", certificates.caFile]
                await self.subscribe(port: port, topic: "tls/hello", arguments: tls, broker: broker, group: &group)
                let published = try await runProcess(
                    Self.mosquittoPub,
                    ["-h", "127.0.0.1", "-p", "\(port)", "-t", "tls/hello", "-m", "over TLS", "-q", "1"] + tls
                )
                #expect(published.status == 0, "\(published.errorOutput)")
                let received = try #require(try await group.next())
                #expect(received.status == 0, "\(received.errorOutput)")
                #expect(received.output == "over TLS\n")
            }
        }
    }

    @Test(.enabled(if: Self.hasMosquittoClients, "needs mosquitto-clients"))
    func clientWithoutTheRequiredCertificateIsRefused() async throws {
        try await self.withTLSBroker(requiresClientCertificate: true) { broker, port, certificates in
            let base = [
                "-h", "127.0.0.1", "-p", "\(port)", "-t", "tls/mtls", "-m", "x", "--cafile", certificates.caFile,
            ]
            let refused = try await runProcess(Self.mosquittoPub, base)
            #expect(refused.status != 0)
            #expect(broker.statistics.connections == 0)
            let accepted = try await runProcess(
                Self.mosquittoPub,
                base + ["--cert", certificates.path("client.pem"), "--key", certificates.path("client.key")]
            )
            #expect(accepted.status == 0, "\(accepted.errorOutput)")
        }
    }

    /// paho over TLS (`tls_set`), over TCP or, with `websockets`, over WebSocket at `/mqtt`: subscribes
    /// to a topic, then publishes (QoS 1) a payload to another (or the same) one, and prints the first
    /// message it gets. Arguments: port, CA file, transport, client id, subscription, topic, payload.
    static let pahoScript = #"""
        import os, sys, threading, paho.mqtt.client as mqtt
        threading.Timer(20, lambda: os._exit(3)).start()
        port, ca, transport, client, sub, topic, payload = sys.argv[1:8]
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client, transport=transport)
        if transport == "websockets": c.ws_set_options(path="/mqtt")
        c.tls_set(ca_certs=ca)
        def on_connect(c, u, *a): c.subscribe(sub, qos=1)
        def on_subscribe(c, u, *a): c.publish(topic, payload.encode(), qos=1)
        def on_message(c, u, m):
            sys.stdout.write(f"{m.topic} {m.payload.decode()}\n"); sys.stdout.flush(); c.disconnect()
        c.on_connect, c.on_subscribe, c.on_message = on_connect, on_subscribe, on_message
        c.connect("localhost", int(port), 60)
        c.loop_forever(timeout=1.0)
        os._exit(0)
        """#

    @Test func pahoWithTLS() async throws {
        try await self.withTLSBroker { _, port, certificates in
            let result = try await runProcess(
                "/usr/bin/env",
                [
                    "python3", "-c", Self.pahoScript, "\(port)", certificates.caFile, "tcp", "paho-tls", "tls/paho",
                    "tls/paho", "paho over TLS",
                ]
            )
            #expect(result.status == 0, "\(result.errorOutput)")
            #expect(result.output == "tls/paho paho over TLS\n")
        }
    }

    /// paho over WebSocket over TLS exchanges a message with our client over `wss://`.
    @Test func pahoAndOurClientOverSecureWebSocket() async throws {
        try await self.withTLSBroker(webSocketPort: 0) { broker, _, certificates in
            let port = try #require(broker.secureWebSocketPort)
            let transport = MQTTTransport(
                configuration: .init(
                    brokerURL: "wss://localhost:\(port)/mqtt",
                    tls: .init(trustedCertificates: .file(certificates.caFile))
                )
            )
            let (messages, continuation) = AsyncStream.makeStream(of: TransportMessage.self)
            try await transport.withConnection(.init(clientID: "ours-wss"), onMessage: { continuation.yield($0) }) {
                connection in
                try await connection.subscribe(to: [TopicFilter("wss/from-paho")])
                try await withThrowingTaskGroup(of: ProcessResult.self) { group in
                    group.addTask {
                        try await runProcess(
                            "/usr/bin/env",
                            [
                                "python3", "-c", Self.pahoScript, "\(port)", certificates.caFile, "websockets",
                                "paho-wss", "wss/to-paho", "wss/from-paho", "paho over wss",
                            ]
                        )
                    }
                    var iterator = messages.makeAsyncIterator()
                    #expect(await iterator.next()?.payload == Array("paho over wss".utf8))
                    // paho subscribed before it published, so this reaches it.
                    try await connection.publish(
                        TransportMessage(topic: "wss/to-paho", payload: Array("ours over wss".utf8), qos: .atLeastOnce)
                    )
                    let result = try #require(try await group.next())
                    #expect(result.status == 0, "\(result.errorOutput)")
                    #expect(result.output == "wss/to-paho ours over wss\n")
                }
            }
        }
    }

    @Test func ourClientWithAClientCertificate() async throws {
        try await self.withTLSBroker(requiresClientCertificate: true) { _, port, certificates in
            let tls = MQTTTransport.TLSOptions(
                trustedCertificates: .file(certificates.caFile),
                clientCertificate: .file(certificates.path("client.pem")),
                clientKey: .file(certificates.path("client.key"))
            )
            let transport = MQTTTransport(configuration: .init(brokerURL: "mqtts://localhost:\(port)", tls: tls))
            let (messages, continuation) = AsyncStream.makeStream(of: TransportMessage.self)
            try await transport.withConnection(.init(clientID: "ours"), onMessage: { continuation.yield($0) }) {
                connection in
                try await connection.subscribe(to: [TopicFilter("tls/ours")])
                let payload = [UInt8](repeating: 0xA5, count: 100_000)
                try await connection.publish(TransportMessage(topic: "tls/ours", payload: payload, qos: .atLeastOnce))
                var iterator = messages.makeAsyncIterator()
                #expect(await iterator.next()?.payload == payload)
            }
        }
    }

    /// Random bytes, a truncated ClientHello, and a record header announcing more than TLS allows:
    /// each connection is closed, and the listener keeps serving TLS clients.
    @Test(arguments: [
        Array((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }),
        [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03],
        [0x17, 0x03, 0x03, 0xFF, 0xFF] + [UInt8](repeating: 0x41, count: 70_000),
    ])
    func malformedInputClosesTheConnection(bytes: [UInt8]) async throws {
        let configuration = { (tls: MQTTBroker.TLSListener) in
            MQTTBroker.Configuration(connectTimeout: .seconds(1), tls: tls)
        }
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let tls = MQTTBroker.TLSListener(
            port: 0,
            certificateFile: certificates.path("server.pem"),
            keyFile: certificates.path("server.key")
        )
        try await MQTTBroker.withRunning(configuration: configuration(tls)) { broker in
            let port = try #require(broker.tlsPort)
            let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: port)
            try? await tcp.write(bytes)
            if bytes.count < 20 { tcp.shutdownOutput() }
            // The broker closes the connection: EOF or a reset, perhaps after an alert.
            var received = 0
            while let chunk = try? await tcp.read(), !chunk.isEmpty { received += chunk.count }
            #expect(received < 1_000)
            tcp.close()
            try await expectTLSListenerServes(port: port, caFile: certificates.caFile)
        }
    }

    @Test func unusableFilesFailBind() throws {
        let tls = MQTTBroker.TLSListener(
            port: 0,
            certificateFile: "/nonexistent/cert.pem",
            keyFile: "/nonexistent/key.pem"
        )
        let error = #expect(throws: BrokerError.self) { try MQTTBroker.bind(configuration: .init(tls: tls)) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("cannot read /nonexistent/cert.pem") == true, "\(String(describing: error))")
    }
}
