import CoatySockets
import Foundation
import Glibc
import Testing

/// A mosquitto broker process on a free loopback port, for the duration of a test.
struct Mosquitto {
    static let executablePath: String? = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    static var isAvailable: Bool { Self.executablePath != nil }

    let port: Int
    var url: String { "mqtt://127.0.0.1:\(self.port)" }

    /// Starts mosquitto (anonymous access, loopback only), waits until it accepts connections, runs
    /// `body`, and stops it — also when `body` throws.
    static func with<Result>(_ body: (Mosquitto) async throws -> Result) async throws -> Result {
        let probe = try TCPListener.bind(port: 0)
        let port = probe.port
        probe.close()
        let process = try await Self.start(port: port)
        defer { Self.kill(process) }
        return try await body(Mosquitto(port: port))
    }

    /// Starts a mosquitto process on `port` and waits until it listens. Stop it with ``kill(_:)``.
    static func start(port: Int) async throws -> Process {
        let executable = try #require(Self.executablePath, "mosquitto is not installed")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coaty-mosquitto-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("mosquitto.conf")
        try "listener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\nmax_inflight_messages 0\n"
            .write(to: config, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-c", config.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        do {
            try await Self.waitUntilListening(port: port, process: process)
        } catch {
            Self.kill(process)
            throw error
        }
        return process
    }

    /// Stops a process with SIGKILL and reaps it. (SIGTERM is not used: a child spawned from a test
    /// thread can inherit a signal mask that blocks it.)
    static func kill(_ process: Process) {
        if process.isRunning {
            _ = Glibc.kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }

    /// Polls the port until mosquitto accepts a connection (bounded by 10 s).
    static func waitUntilListening(port: Int, process: Process) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            if let connection = try? await TCPConnection.connect(host: "127.0.0.1", port: port) {
                connection.close()
                return
            }
            guard process.isRunning else { throw MosquittoError("mosquitto exited with \(process.terminationStatus)") }
            guard ContinuousClock.now < deadline else {
                throw MosquittoError("mosquitto did not start listening on \(port)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

struct MosquittoError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs an external tool and returns its standard output.
func runTool(_ path: String, _ arguments: [String], input: Data? = nil) async throws -> (status: Int32, output: String)
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    let stdin = Pipe()
    process.standardInput = stdin
    try process.run()
    if let input { stdin.fileHandleForWriting.write(input) }
    try stdin.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
