import CoatySockets
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mosquitto broker process on a free loopback port, for tests that need a real third-party broker.
///
/// ```swift
/// @Suite(.enabled(if: Mosquitto.isAvailable, "mosquitto is not installed"), .timeLimit(.minutes(1)))
/// struct MyAgentTests {
///     @Test func talksThroughMosquitto() async throws {
///         try await Mosquitto.withRunning { mosquitto in
///             let transport = MQTTTransport(brokerURL: mosquitto.url)
///             // …
///         }
///     }
/// }
/// ```
package struct Mosquitto: Sendable {
    /// Where the mosquitto executable is, if installed (Debian installs it in /usr/sbin).
    package static let executablePath: String? = [
        "/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto",
    ]
    .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether mosquitto is installed.
    package static var isAvailable: Bool { Self.executablePath != nil }

    /// The port it listens on (loopback only).
    package let port: Int

    /// `mqtt://127.0.0.1:<port>`.
    package var url: String { "mqtt://127.0.0.1:\(self.port)" }

    /// Starts mosquitto (anonymous access, loopback only, no persistence), waits until it accepts
    /// connections, runs `body`, and stops it — also when `body` throws.
    ///
    /// - Parameters:
    ///   - listenerOptions: Lines of mosquitto.conf for the listener, for example `certfile …` and
    ///     `keyfile …` for a TLS listener, or `password_file …`.
    ///   - allowAnonymous: Whether clients without a user name may connect.
    /// - Throws: ``MosquittoError`` if mosquitto is missing or does not start listening within 10 s;
    ///   what `body` throws.
    package static func withRunning<Result>(
        listenerOptions: [String] = [],
        allowAnonymous: Bool = true,
        _ body: (Mosquitto) async throws -> Result
    ) async throws -> Result {
        let port = try Self.freePort()
        let process = try await Self.start(port: port, listenerOptions: listenerOptions, allowAnonymous: allowAnonymous)
        defer { Self.kill(process) }
        return try await body(Mosquitto(port: port))
    }

    /// A loopback port for a broker process: ``LoopbackPort/unused()``.
    package static func freePort() throws -> Int {
        try LoopbackPort.unused()
    }

    /// Starts a mosquitto process on `port` and waits until it listens. Stop it with ``kill(_:)``.
    ///
    /// - Parameters:
    ///   - listenerOptions: Lines of mosquitto.conf for the listener.
    ///   - allowAnonymous: Whether clients without a user name may connect.
    /// - Throws: ``MosquittoError`` if mosquitto is missing, exits, or does not listen within 10 s.
    package static func start(
        port: Int,
        listenerOptions: [String] = [],
        allowAnonymous: Bool = true
    ) async throws -> ChildProcess {
        guard let executable = Self.executablePath else { throw MosquittoError("mosquitto is not installed") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coaty-mosquitto-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("mosquitto.conf")
        let lines =
            ["listener \(port) 127.0.0.1"] + listenerOptions + [
                "allow_anonymous \(allowAnonymous)", "persistence false", "max_inflight_messages 0",
            ]
        try (lines.joined(separator: "\n") + "\n").write(to: config, atomically: true, encoding: .utf8)
        let process = try ChildProcess.spawn(executable, ["-c", config.path])
        do {
            try await Self.waitUntilListening(port: port, process: process)
        } catch {
            Self.kill(process)
            throw error
        }
        return process
    }

    /// Stops a process with SIGKILL and waits until it has exited.
    package static func kill(_ process: ChildProcess) {
        process.kill()
        process.waitUntilExit()
    }

    /// Polls the port until a connection succeeds, bounded by 10 s (readiness, not synchronisation);
    /// also for other servers the tests start (`openssl s_server`).
    package static func waitUntilListening(port: Int, process: ChildProcess) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            if let connection = try? await TCPConnection.connect(host: "127.0.0.1", port: port) {
                connection.close()
                return
            }
            if let status = process.exitStatus { throw MosquittoError("mosquitto exited with \(status)") }
            guard ContinuousClock.now < deadline else {
                throw MosquittoError("mosquitto did not start listening on \(port)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// Why a ``Mosquitto`` broker could not be started.
package struct MosquittoError: Error, CustomStringConvertible {
    /// What went wrong.
    package var description: String

    /// Creates an error.
    package init(_ description: String) { self.description = description }
}
