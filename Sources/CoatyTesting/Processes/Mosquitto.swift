import CoatySockets
import Foundation
import Synchronization

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
public struct Mosquitto: Sendable {
    /// Where the mosquitto executable is, if installed (Debian installs it in /usr/sbin).
    public static let executablePath: String? = [
        "/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto",
    ]
    .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether mosquitto is installed.
    public static var isAvailable: Bool { Self.executablePath != nil }

    /// The port it listens on (loopback only).
    public let port: Int

    /// `mqtt://127.0.0.1:<port>`.
    public var url: String { "mqtt://127.0.0.1:\(self.port)" }

    /// Starts mosquitto (anonymous access, loopback only, no persistence), waits until it accepts
    /// connections, runs `body`, and stops it — also when `body` throws.
    ///
    /// - Throws: ``MosquittoError`` if mosquitto is missing or does not start listening within 10 s;
    ///   what `body` throws.
    public static func withRunning<Result>(_ body: (Mosquitto) async throws -> Result) async throws -> Result {
        let port = try Self.freePort()
        let process = try await Self.start(port: port)
        defer { Self.kill(process) }
        return try await body(Mosquitto(port: port))
    }

    /// A loopback port for a broker process: free when checked, below the kernel's ephemeral range,
    /// and not returned before in this process.
    ///
    /// Why not port 0's answer: the kernel hands ephemeral ports out again, to the next `bind(0)` (our
    /// own brokers in parallel tests) or to another `freePort()`. A mosquitto started on such a port
    /// fails to bind, the test then talks to whoever holds the port, and the test that owns it kills
    /// it under the other (seen in CI as "closed the connection"). Ports below the ephemeral range are
    /// never handed out by `bind(0)` or by outgoing connections, and remembering the ones returned rules
    /// out two tests of this process getting the same one.
    public static func freePort() throws -> Int {
        let upperBound = Self.ephemeralRangeStart
        let lowerBound = max(1024, upperBound - 12_000)
        var candidate = Int.random(in: lowerBound..<upperBound)
        for _ in 0..<(upperBound - lowerBound) {
            candidate = candidate + 1 < upperBound ? candidate + 1 : lowerBound
            guard handedOutPorts.withLock({ $0.insert(candidate).inserted }) else { continue }
            if let probe = try? TCPListener.bind(port: candidate) {
                probe.close()
                return candidate
            }
        }
        throw MosquittoError("no free port between \(lowerBound) and \(upperBound)")
    }

    /// The first port of the kernel's ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`;
    /// 32768 where it cannot be read, Linux's default and close to other systems').
    private static let ephemeralRangeStart: Int = {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
            let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first,
            let start = Int(first), start > 2048
        else { return 32768 }
        return start
    }()

    /// Starts a mosquitto process on `port` and waits until it listens. Stop it with ``kill(_:)``.
    ///
    /// - Throws: ``MosquittoError`` if mosquitto is missing, exits, or does not listen within 10 s.
    public static func start(port: Int) async throws -> ChildProcess {
        guard let executable = Self.executablePath else { throw MosquittoError("mosquitto is not installed") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coaty-mosquitto-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("mosquitto.conf")
        try "listener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\nmax_inflight_messages 0\n"
            .write(to: config, atomically: true, encoding: .utf8)
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
    public static func kill(_ process: ChildProcess) {
        process.kill()
        process.waitUntilExit()
    }

    /// Polls the port until a connection succeeds, bounded by 10 s (readiness, not synchronisation).
    static func waitUntilListening(port: Int, process: ChildProcess) async throws {
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

/// The ports ``Mosquitto/freePort()`` has returned in this process.
private let handedOutPorts = Mutex<Set<Int>>([])

/// Why a ``Mosquitto`` broker could not be started.
public struct MosquittoError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}
