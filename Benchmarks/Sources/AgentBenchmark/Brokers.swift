import BenchmarkSupport
import CoatyBroker
import CoatyMQTT
import CoatyTransport
import Foundation
import Glibc

/// A broker the benchmark measures through, running as a child process, with a plain and a TLS
/// listener on free loopback ports.
struct BenchmarkBroker {
    let name: String
    let process: ChildProcess
    let port: Int
    let tlsPort: Int

    func url(tls: Bool) -> String { tls ? "mqtts://127.0.0.1:\(self.tlsPort)" : "mqtt://127.0.0.1:\(self.port)" }

    /// The arguments that take `mosquitto_pub` and `mosquitto_sub` to this broker.
    func toolArguments(tls: Bool, caFile: String) -> [String] {
        tls
            ? ["-h", "127.0.0.1", "-p", "\(self.tlsPort)", "--cafile", caFile]
            : ["-h", "127.0.0.1", "-p", "\(self.port)"]
    }

    /// What the broker wrote to standard error (the embedded broker logs its warnings there).
    var log: String { self.process.errorOutput }

    func stop() {
        self.process.kill(SIGTERM)
        self.process.waitUntilExit()
    }

    /// mosquitto, with no per-client queue limit so that neither side loses messages under load.
    static func mosquitto(certificates: TestCertificates, directory: String) async throws -> BenchmarkBroker {
        let executable = try findExecutable(["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto"])
        let port = try LoopbackPort.unused()
        let tlsPort = try LoopbackPort.unused()
        let configuration = [
            "per_listener_settings false", "allow_anonymous true", "persistence false", "max_queued_messages 0",
            "listener \(port) 127.0.0.1",
            "listener \(tlsPort) 127.0.0.1",
            "certfile \(certificates.path("server.pem"))", "keyfile \(certificates.path("server.key"))",
        ]
        let file = directory + "/mosquitto.conf"
        try (configuration.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let process = try ChildProcess.spawn(executable, ["-c", file])
        let broker = BenchmarkBroker(name: "mosquitto", process: process, port: port, tlsPort: tlsPort)
        try await broker.waitUntilReady(caFile: certificates.caFile)
        return broker
    }

    /// The embedded broker, in a child process running this executable with `serve`.
    static func embedded(certificates: TestCertificates) async throws -> BenchmarkBroker {
        let executable = URL(filePath: "/proc/self/exe").resolvingSymlinksInPath().path
        let process = try ChildProcess.spawn(
            executable,
            ["serve", certificates.path("server.pem"), certificates.path("server.key")],
            captureOutput: true
        )
        try waitForFirstLine(of: process, name: "the embedded broker")
        let ports = process.output.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard ports.count == 2 else { throw BenchmarkError("the embedded broker printed \(process.output)") }
        let broker = BenchmarkBroker(name: "embedded", process: process, port: ports[0], tlsPort: ports[1])
        try await broker.waitUntilReady(caFile: certificates.caFile)
        return broker
    }

    /// Serves the embedded broker until killed, after printing its two ports (`serve CERT KEY`).
    static func serve(certificateFile: String, keyFile: String) async throws -> Never {
        let broker = try MQTTBroker.bind(
            // Queues as unbounded as mosquitto's with `max_queued_messages 0`, so neither drops.
            configuration: .init(
                maximumQueuedMessagesPerClient: 10_000_000,
                maximumQueuedBytesPerClient: 4 << 30,
                tls: .init(port: 0, certificateFile: certificateFile, keyFile: keyFile),
                logger: .warningsToStandardError
            )
        )
        FileHandle.standardOutput.write(Data("\(broker.port) \(broker.tlsPort ?? 0)\n".utf8))
        try await broker.run()
        exit(0)
    }

    /// Returns once both listeners answer an MQTT connection.
    private func waitUntilReady(caFile: String) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        for tls in [false, true] {
            while true {
                do {
                    try await self.transport(tls: tls, caFile: caFile)
                        .withConnection(.init(clientID: "probe"), onMessage: { _ in }) { _ in }
                    break
                } catch {
                    guard self.process.isRunning, ContinuousClock.now < deadline else {
                        throw BenchmarkError("\(self.name) did not start: \(error) \(self.process.errorOutput)")
                    }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
        }
    }

    /// Our MQTT client's transport to this broker.
    func transport(tls: Bool, caFile: String) -> MQTTTransport {
        MQTTTransport(
            configuration: .init(
                brokerURL: self.url(tls: tls),
                connectTimeout: .seconds(5),
                tls: .init(trustedCertificates: .file(caFile))
            )
        )
    }
}
