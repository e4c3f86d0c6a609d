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
            // Discover listens for its whole window: long enough for a loaded machine.
            options.timeoutSeconds = 3
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
                    for await call in calls { try answerAdd(call) }
                }
                let lines = LineSink()
                var options = CallOptions()
                options.operation = "com.example.add"
                // Returns at the first reply; the timeout only bounds a run that gets none.
                options.timeoutSeconds = 10
                options.parameters = "[42, 43]"
                let sums = try await CallCommand.run(options, transport: InProcessTransport(bus: bus)) {
                    lines.append($0)
                }
                #expect(sums == CallCommand.Returns(count: 1, errors: 0))
                #expect(CallCommand.failure(sums, options: options) == nil)
                options.parameters = #"{"x": 1}"#
                let errors = try await CallCommand.run(options, transport: InProcessTransport(bus: bus)) {
                    lines.append($0)
                }
                #expect(errors == CallCommand.Returns(count: 1, errors: 1))
                #expect(CallCommand.failure(errors, options: options) != nil)
                let printed = lines.lines
                #expect(printed.contains { $0.hasSuffix(": result 85") })
                #expect(printed.contains { $0.hasSuffix(": error -32602 Invalid params") })
                group.cancelAll()
            }
        }
    }

    /// What makes `coaty call` fail: no Return, or an error among them; fewer than `--count` results
    /// is still a success (the summary line says how many came).
    @Test func callFailures() {
        var options = CallOptions()
        options.operation = "com.example.op"
        #expect(
            CallCommand.failure(.init(count: 0, errors: 0), options: options)?.description
                == "no agent answered 'com.example.op' within 2 s"
        )
        #expect(
            CallCommand.failure(.init(count: 2, errors: 1), options: options)?.description
                == "1 of 2 return(s) for 'com.example.op' carried an error"
        )
        options.count = 3
        #expect(CallCommand.failure(.init(count: 2, errors: 0), options: options) == nil)
    }

    @Test func callRejectsInvalidParameterJSON() async throws {
        var options = CallOptions()
        options.operation = "op"
        options.parameters = "[1,"
        await #expect(throws: CLIError.self) {
            _ = try await CallCommand.run(options, transport: InProcessTransport(bus: InProcessBus())) { _ in }
        }
    }

    @Test func routerAssociatesTheAgentsIOPointsAndEndsTheAssociationsWhenItLeaves() async throws {
        let source = IOSource(name: "Thermometer", valueType: "com.example.Temperature", updateRate: 250)
        let actor = IOActor(name: "Display", valueType: "com.example.Temperature")
        try await withOnlineManagers(
            count: 1,
            configure: { _, configuration in
                configuration.ioNodes = [IONode(name: "Kitchen", ioSources: [source], ioActors: [actor])]
            }
        ) { managers, bus in
            let associations = try await managers[0].observeAssociate(ioContextName: "Kitchen")
            let lines = LineSink()
            var options = RouterOptions()
            options.context = "Kitchen"
            options.count = 1
            try await RouterCommand.run(options, transport: InProcessTransport(bus: bus)) { lines.append($0) }
            #expect(
                lines.lines == [
                    "routing IO context 'Kitchen' in namespace '-'",
                    "associate    Thermometer (\(source.objectID.rawValue.prefix(8))…) → Display "
                        + "(\(actor.objectID.rawValue.prefix(8))…)  on coaty/3/-/IOV/\(source.objectID)  every 250 ms",
                ]
            )
            // The router left: the agent hears the association end.
            var iterator = associations.makeAsyncIterator()
            #expect(await iterator.next()?.associatingRoute != nil)
            #expect(await iterator.next()?.associatingRoute == nil)
        }
    }
}
