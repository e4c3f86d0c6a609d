import CoatyCommunication
import CoatyModel
import CoatyTesting
import Testing

@testable import CoatyCLI

@Suite(.timeLimit(.minutes(1)))
struct AgentCommandTests {
    @Test func discoverListsTheOtherAgents() async throws {
        try await withOnlineManagers(count: 2) { _, bus in
            let lines = LineSink()
            var options = DiscoverOptions()
            options.timeoutSeconds = 0.5
            let found = try await DiscoverCommand.run(options, transport: InProcessTransport(bus: bus)) {
                lines.append($0)
            }
            #expect(found == 2)
            let printed = lines.lines
            #expect(printed.contains { $0.hasPrefix("Agent0  ") })
            #expect(printed.contains { $0.hasPrefix("Agent1  ") })
            #expect(printed.last == "2 agent(s) found in namespace '-'")
        }
    }

    @Test func callPrintsResultsAndErrors() async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let calls = try await managers[0].observeCall("com.example.add")
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await call in calls {
                        if let a = call.parameter(at: 0)?.intValue, let b = call.parameter(at: 1)?.intValue {
                            try call.returnResult(.int(a + b))
                        } else {
                            try call.returnError(RemoteCallError(code: -32602, message: "Invalid params"))
                        }
                    }
                }
                let lines = LineSink()
                var options = CallOptions()
                options.operation = "com.example.add"
                options.timeoutSeconds = 0.5
                options.parameters = "[42, 43]"
                let sums = try await CallCommand.run(options, transport: InProcessTransport(bus: bus)) {
                    lines.append($0)
                }
                #expect(sums == 1)
                options.parameters = #"{"x": 1}"#
                let errors = try await CallCommand.run(options, transport: InProcessTransport(bus: bus)) {
                    lines.append($0)
                }
                #expect(errors == 1)
                let printed = lines.lines
                #expect(printed.contains { $0.hasSuffix(": result 85") })
                #expect(printed.contains { $0.hasSuffix(": error -32602 Invalid params") })
                group.cancelAll()
            }
        }
    }

    @Test func callRejectsInvalidParameterJSON() async throws {
        var options = CallOptions()
        options.operation = "op"
        options.parameters = "[1,"
        await #expect(throws: CLIError.self) {
            _ = try await CallCommand.run(options, transport: InProcessTransport(bus: InProcessBus())) { _ in }
        }
    }
}
