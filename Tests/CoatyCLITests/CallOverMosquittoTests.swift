import CoatyCommunication
import CoatyMQTT
import CoatyModel
import Foundation
import TestSupport
import Testing

/// `coaty call` through mosquitto, as a script runs it: it returns as soon as the expected Returns
/// arrived, and its exit status says whether the call succeeded.
@Suite(.enabled(if: Mosquitto.isAvailable, "mosquitto is not installed"), .timeLimit(.minutes(1)))
struct CallOverMosquittoTests {
    /// One Return is enough by default: the command exits with it, long before its 30 s timeout.
    @Test func returnsAsSoonAsTheReturnArrived() async throws {
        try await Self.withAdder { url, executable in
            let started = ContinuousClock.now
            let result = try await runProcess(
                executable,
                ["call", "com.example.add", "--params", "[40, 2]", "--timeout", "30", "--broker", url]
            )
            let elapsed = ContinuousClock.now - started
            #expect(result.status == 0, "\(result.errorOutput)")
            #expect(result.output.contains(": result 42\n"), "\(result.output)")
            #expect(result.output.hasSuffix("1 of 1 return(s) for com.example.add\n"), "\(result.output)")
            #expect(elapsed < .seconds(20), "took \(elapsed): the command waited for its timeout")
        }
    }

    /// A Return that carries an error fails the command, and is printed.
    @Test func anErrorReturnFailsTheCommand() async throws {
        try await Self.withAdder { url, executable in
            let result = try await runProcess(
                executable,
                ["call", "com.example.add", "--params", #"{"x": 1}"#, "--timeout", "30", "--broker", url]
            )
            #expect(result.status == 1)
            #expect(result.output.contains(": error -32602 Invalid params\n"), "\(result.output)")
            #expect(
                result.errorOutput == "error: 1 of 1 return(s) for 'com.example.add' carried an error\n",
                "\(result.errorOutput)"
            )
        }
    }

    /// No Return before the timeout fails the command.
    @Test func noReturnFailsTheCommand() async throws {
        try await Self.withAdder { url, executable in
            let result = try await runProcess(
                executable,
                ["call", "com.example.nobody", "--timeout", "0.5", "--broker", url]
            )
            #expect(result.status == 1)
            #expect(result.output == "0 of 1 return(s) for com.example.nobody\n")
            #expect(result.errorOutput == "error: no agent answered 'com.example.nobody' within 0.5 s\n")
        }
    }

    /// `--count 2` with two agents answering: both Returns are printed, and the command exits with the
    /// second.
    @Test func waitsForTheCountOfReturns() async throws {
        try await Self.withAdder(agents: 2) { url, executable in
            let result = try await runProcess(
                executable,
                ["call", "com.example.add", "--params", "[1, 2]", "--count", "2", "--timeout", "30", "--broker", url]
            )
            #expect(result.status == 0, "\(result.errorOutput)")
            #expect(result.output.ranges(of: ": result 3\n").count == 2, "\(result.output)")
            #expect(result.output.hasSuffix("2 of 2 return(s) for com.example.add\n"), "\(result.output)")
        }
    }

    /// Runs `agents` agents answering `com.example.add` (the sum of two numbers, or an "Invalid params"
    /// error) through a mosquitto, and `body` with the broker's URL and the `coaty` executable.
    private static func withAdder(
        agents: Int = 1,
        _ body: @escaping @Sendable (String, String) async throws -> Void
    ) async throws {
        let executable = try #require(InterruptTests.executable, "coaty is not built")
        try await Mosquitto.withRunning { mosquitto in
            let managers = (0..<agents).map { index in
                CommunicationManager(
                    transport: MQTTTransport(brokerURL: mosquitto.url),
                    configuration: .init(identity: Identity(name: "Adder\(index)"))
                )
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for manager in managers {
                    let states = manager.observeCommunicationState()
                    let calls = try await manager.observeCall("com.example.add")
                    group.addTask { try await manager.run() }
                    group.addTask {
                        for await call in calls { try answerAdd(call) }
                    }
                    _ = await states.first { $0 == .online }
                }
                try await body(mosquitto.url, executable)
                for manager in managers { manager.finish() }
                try await group.waitForAll()
            }
        }
    }
}
