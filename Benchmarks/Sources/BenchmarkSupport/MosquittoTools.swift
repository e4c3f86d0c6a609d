import Foundation
import Glibc

/// A benchmark's failure, with what went wrong.
package struct BenchmarkError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// The first of `candidates` that is an executable file.
package func findExecutable(_ candidates: [String]) throws -> String {
    guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw BenchmarkError("none of \(candidates) is installed")
    }
    return path
}

/// `duration` in seconds.
package func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Waits until `process` has written a whole line to its standard output.
package func waitForFirstLine(of process: ChildProcess, name: String) throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while !process.output.contains("\n") {
        guard process.isRunning else { throw BenchmarkError("\(name) ended early: \(process.errorOutput)") }
        guard ContinuousClock.now < deadline else { throw BenchmarkError("\(name) printed nothing") }
        usleep(1_000)
    }
}

/// mosquitto's C clients, `mosquitto_pub` and `mosquitto_sub`, as the baseline of a throughput run.
package struct MosquittoTools: Sendable {
    package let pub: String
    package let sub: String

    /// Finds the installed clients.
    package init() throws {
        self.pub = try findExecutable(["/usr/bin/mosquitto_pub", "/usr/local/bin/mosquitto_pub"])
        self.sub = try findExecutable(["/usr/bin/mosquitto_sub", "/usr/local/bin/mosquitto_sub"])
    }

    /// One run: `mosquitto_sub -C count+1` subscribes (readiness is detected from a retained marker it
    /// prints first; its output goes to a file), then `mosquitto_pub -l` publishes the `count` lines of
    /// `inputFile`. Returns the seconds from starting `mosquitto_pub` until `mosquitto_sub` has
    /// received all of them and exited.
    ///
    /// - Parameter connection: The arguments that reach the broker (`-h`, `-p`, and for TLS `--cafile`).
    package func throughput(connection: [String], topic: String, qos: Int, count: Int, inputFile: String) throws
        -> Double
    {
        let marker = try ChildProcess.spawn(self.pub, connection + ["-t", topic, "-r", "-q", "1", "-m", "ready"])
        marker.waitUntilExit()
        let subscriber = try ChildProcess.spawn(
            self.sub,
            connection + ["-t", topic, "-q", "\(qos)", "-C", "\(count + 1)", "-W", "120"],
            captureOutput: true
        )
        defer {
            subscriber.kill()
            subscriber.waitUntilExit()
        }
        try waitForFirstLine(of: subscriber, name: "mosquitto_sub")
        let start = ContinuousClock.now
        let publisher = try ChildProcess.spawn(
            self.pub,
            connection + ["-t", topic, "-q", "\(qos)", "-l"],
            input: .file(inputFile)
        )
        subscriber.waitUntilExit()
        let elapsed = ContinuousClock.now - start
        publisher.waitUntilExit()
        // Clear the retained marker so later runs are not affected by it.
        try ChildProcess.spawn(self.pub, connection + ["-t", topic, "-r", "-n"]).waitUntilExit()
        guard subscriber.exitStatus == 0 else {
            throw BenchmarkError("mosquitto_sub failed: \(subscriber.errorOutput)")
        }
        return seconds(elapsed)
    }
}
