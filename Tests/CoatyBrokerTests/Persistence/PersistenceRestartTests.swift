import CoatyCore
import Foundation
import TestSupport
import Testing

@testable import CoatyBroker

/// `coaty broker --data-dir` as a child process, stopped with SIGTERM or SIGKILL and started again,
/// with mosquitto's clients: persistent sessions, their queued messages and retained messages
/// survive, and a truncated log is recovered up to the damage.
@Suite(.timeLimit(.minutes(2)))
struct PersistenceRestartTests {
    static let subscriber = "persist-sub"

    /// A `coaty broker` child on a port of its own, with a fresh data directory.
    struct Broker {
        let executable: String
        let port: Int
        let directory: URL
        var logPath: String { self.directory.appendingPathComponent("broker.log").path }

        /// Starts the broker and waits until it has restored its state and serves (it says so on
        /// standard output; the port listens a little earlier).
        func start(_ options: [String] = []) async throws -> ChildProcess {
            let child = try ChildProcess.spawn(
                self.executable,
                ["broker", "--port", "\(self.port)", "--data-dir", self.directory.path] + options,
                captureOutput: true
            )
            try await Mosquitto.waitUntilListening(port: self.port, process: child)
            let deadline = ContinuousClock.now + .seconds(10)
            while !child.output.contains("coaty broker listening") {
                try #require(child.isRunning && ContinuousClock.now < deadline, "\(child.errorOutput)")
                try await Task.sleep(for: .milliseconds(10))
            }
            return child
        }

        /// Sends `signal` and waits for the exit status.
        func stop(_ child: ChildProcess, with signal: Int32) async -> Int32 {
            child.kill(signal)
            return await child.waitForExit()
        }

        /// Runs a mosquitto client against the broker.
        func run(_ tool: String, _ arguments: [String], input: String? = nil) async throws -> ProcessResult {
            try await runProcess(
                tool,
                ["-h", "127.0.0.1", "-p", "\(self.port)"] + arguments,
                input: input.map { Data($0.utf8) }
            )
        }

        /// Opens the persistent session of ``PersistenceRestartTests/subscriber`` on `persist/#` at
        /// QoS 1, then leaves it offline.
        func openPersistentSession() async throws {
            let subscribed = try await self.run(
                InteropTests.mosquittoSub,
                ["-i", PersistenceRestartTests.subscriber, "-c", "-q", "1", "-t", "persist/#", "-E"]
            )
            #expect(subscribed.status == 0, "\(subscribed.errorOutput)")
        }

        /// Publishes `m0`…`m(count-1)` at QoS 1 to `persist/t`; mosquitto_pub exits once every
        /// PUBACK has arrived.
        func publish(count: Int) async throws {
            let lines = (0..<count).map { "m\($0)\n" }.joined()
            let published = try await self.run(
                InteropTests.mosquittoPub,
                ["-q", "1", "-t", "persist/t", "-l"],
                input: lines
            )
            #expect(published.status == 0, "\(published.errorOutput)")
        }

        /// Resumes the persistent session and returns the first `count` payloads delivered.
        func receive(count: Int) async throws -> [String] {
            let received = try await self.run(
                InteropTests.mosquittoSub,
                [
                    "-i", PersistenceRestartTests.subscriber, "-c", "-q", "1", "-t", "persist/#", "-C", "\(count)",
                    "-W", "30",
                ]
            )
            #expect(received.status == 0, "\(received.errorOutput)")
            return received.output.split(separator: "\n").map(String.init)
        }

        /// The state the log on disk holds now.
        func stateOnDisk() throws -> PersistentState {
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: self.logPath)))
            return PersistentState(
                limits: BrokerSessions.Limits(),
                replaying: PersistenceLogCodec.decode(bytes).records
            )
        }
    }

    private func withBroker(_ body: (Broker) async throws -> Void) async throws {
        let executable = try #require(ChildProcess.builtExecutable(named: "coaty"), "coaty is not built")
        for tool in [InteropTests.mosquittoPub, InteropTests.mosquittoSub] {
            try #require(FileManager.default.isExecutableFile(atPath: tool), "\(tool) is not installed")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coaty-persist-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(Broker(executable: executable, port: try LoopbackPort.unused(), directory: directory))
    }

    private static let expected = (0..<1000).map { "m\($0)" }

    @Test func aThousandQueuedMessagesSurviveSIGTERM() async throws {
        try await self.withBroker { broker in
            let first = try await broker.start()
            try await broker.openPersistentSession()
            try await broker.publish(count: 1000)
            #expect(await broker.stop(first, with: SIGTERM) == 0, "\(first.errorOutput)")

            let second = try await broker.start()
            #expect(second.errorOutput.contains("state restored"), "\(second.errorOutput)")
            #expect(try await broker.receive(count: 1000) == Self.expected)
            #expect(await broker.stop(second, with: SIGTERM) == 0)
        }
    }

    /// With a sync interval of 200 ms, what was acknowledged is on disk within the interval; a
    /// SIGKILL after that loses none of it.
    @Test func aThousandQueuedMessagesSurviveSIGKILLAfterTheSyncInterval() async throws {
        try await self.withBroker { broker in
            let first = try await broker.start(["--sync-interval", "0.2"])
            try await broker.openPersistentSession()
            try await broker.publish(count: 1000)
            let acknowledged = ContinuousClock.now
            // Readiness, not synchronisation: poll the file until the writer has synced the messages.
            let client = Array(Self.subscriber.utf8)
            while try broker.stateOnDisk().sessions[client]?.pending.count != 1000 {
                #expect(ContinuousClock.now - acknowledged < .seconds(10), "not synced in 10 s")
                try await Task.sleep(for: .milliseconds(20))
            }
            let synced = ContinuousClock.now - acknowledged
            #expect(await broker.stop(first, with: SIGKILL) == 128 + SIGKILL)

            let second = try await broker.start()
            #expect(try await broker.receive(count: 1000) == Self.expected, "synced after \(synced)")
            #expect(await broker.stop(second, with: SIGTERM) == 0)
        }
    }

    @Test func retainedMessagesSurviveARestart() async throws {
        try await self.withBroker { broker in
            let first = try await broker.start()
            for (topic, payload) in [("r/a", ["-m", "one"]), ("r/b", ["-m", "two"]), ("r/b", ["-n"])] {
                let published = try await broker.run(
                    InteropTests.mosquittoPub,
                    ["-q", "1", "-r", "-t", topic] + payload
                )
                #expect(published.status == 0, "\(published.errorOutput)")
            }
            #expect(await broker.stop(first, with: SIGTERM) == 0)

            let second = try await broker.start()
            #expect(try broker.stateOnDisk().retained.allMessages.map(\.topicString) == ["r/a"])
            let received = try await broker.run(
                InteropTests.mosquittoSub,
                ["-t", "r/#", "-C", "1", "-W", "10", "-F", "%r %t %p"]
            )
            #expect(received.output == "1 r/a one\n", "\(received.errorOutput)")
            #expect(await broker.stop(second, with: SIGTERM) == 0)
        }
    }

    /// A log cut in its last record: the broker starts, keeps every whole record, says on its log
    /// what it discarded and keeps the damaged file.
    @Test func aTruncatedLogIsRecoveredUpToTheDamage() async throws {
        try await self.withBroker { broker in
            let first = try await broker.start()
            try await broker.openPersistentSession()
            try await broker.publish(count: 10)
            #expect(await broker.stop(first, with: SIGTERM) == 0)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: broker.logPath))
            let size = try handle.seekToEnd()
            try handle.truncate(atOffset: size - 3)
            try handle.close()

            let second = try await broker.start()
            #expect(second.errorOutput.contains("damaged log recovered"), "\(second.errorOutput)")
            #expect(second.errorOutput.contains("the last record is incomplete"), "\(second.errorOutput)")
            #expect(FileManager.default.fileExists(atPath: broker.logPath + ".damaged"))
            #expect(try await broker.receive(count: 9) == (0..<9).map { "m\($0)" })
            #expect(await broker.stop(second, with: SIGTERM) == 0)
        }
    }
}
