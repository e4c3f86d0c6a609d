import CoatyCommunication
import CoatyModel
import CoatyTesting
import CoatyTransport
import Synchronization
import Testing

@testable import CoatyCLI

@Suite(.timeLimit(.minutes(1)))
struct MonitorTests {
    @Test func printsOneLinePerEventWithAgentNames() async throws {
        let bus = InProcessBus()
        let lines = LineSink()
        let (ready, readyContinuation) = AsyncStream.makeStream(of: Void.self)
        let options = {
            var options = MonitorOptions()
            options.count = 3
            return options
        }()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await MonitorCommand.run(
                    options,
                    transport: InProcessTransport(bus: bus),
                    ready: {
                        readyContinuation.yield()
                    }
                ) { line in lines.append(line) }
            }
            for await _ in ready { break }
            try await withOnlineManagers(count: 1, bus: bus) { managers, _ in
                // The join event (ADV:Identity) is the first line; then an Advertise and a Deadvertise.
                let thing = CoatyObject(objectType: "com.example.Thing", name: "Thing42")
                try await managers[0].publish(AdvertiseEvent(thing))
                try await group.next()
            }
        }
        let printed = lines.lines
        #expect(printed.count == 3)
        #expect(printed[0].contains("ADV:Identity") && printed[0].contains("coaty.Identity \"Agent0\""))
        #expect(printed[1].contains("ADV:CoatyObject") && printed[1].contains("Agent0 ("))
        #expect(printed[1].contains("com.example.Thing \"Thing42\""))
        #expect(printed[2].contains("ADV::com.example.Thing"))
    }

    /// A monitor whose broker goes away fails with a clear error instead of waiting silently forever.
    @Test func failsWhenTheBrokerGoesAway() async throws {
        let bus = InProcessBus()
        let (ready, readyContinuation) = AsyncStream.makeStream(of: Void.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                await #expect(throws: (any Error).self) {
                    try await MonitorCommand.run(
                        MonitorOptions(),
                        transport: InProcessTransport(bus: bus),
                        ready: { readyContinuation.yield() }
                    ) { _ in }
                }
            }
            for await _ in ready { break }
            let monitor = try #require(bus.clientIDs.first { $0.hasPrefix("CoatyMonitor") })
            #expect(bus.dropConnection(clientID: monitor))
            try await group.waitForAll()
        }
    }

    @Test(arguments: [
        (EventCode.deadvertise, #"{"objectIds":["11111111-1111","22222222-2222"]}"#, "objectIds 11111111, 22222222"),
        (.discover, #"{"coreTypes":["Identity"]}"#, "coreTypes [Identity]"),
        (.return, #"{"error":{"code":-32602,"message":"Invalid params"}}"#, "error -32602 Invalid params"),
        (.return, #"{"result":85}"#, "result 85"),
        (.call, #"{"parameters":[42,43]}"#, "parameters [42,43]"),
        (.channel, #"{"objects":[]}"#, "0 object(s)"),
        (.associate, #"{"ioSourceId":"66666666-6","ioActorId":"77777777-7"}"#, "66666666 ↛ 77777777 (disassociate)"),
    ])
    func summaries(code: EventCode, json: String, expected: String) throws {
        let payload = Array(json.utf8)
        #expect(MonitorFormatter.summary(code: code, json: try AnyCodable(json: payload), payload: payload) == expected)
    }

    @Test func ignoresNonCoatyTopicsAndSurvivesInvalidPayloads() {
        var formatter = MonitorFormatter()
        #expect(formatter.line(topic: "other/topic", payload: [1, 2], time: "t") == nil)
        let line = formatter.line(topic: "coaty/3/-/ADV:CoatyObject/abc", payload: Array("{oops".utf8), time: "t")
        #expect(line?.contains("(not JSON, 5 bytes)") == true)
    }
}

/// Collects lines written from another task.
final class LineSink: Sendable {
    private let storage = Mutex<[String]>([])

    func append(_ line: String) {
        self.storage.withLock { $0.append(line) }
    }

    var lines: [String] { self.storage.withLock { $0 } }

    /// A monitor whose output falls behind keeps the newest events and says how many it dropped.
    @Test func aFullBufferDropsTheOldestAndCountsThem() async {
        let (stream, buffer) = MonitorBuffer.make(capacity: 2)
        for index in 1...5 { buffer.yield(TransportMessage(topic: "t/\(index)", payload: [])) }
        #expect(buffer.takeDropped() == 3)
        #expect(buffer.takeDropped() == 0)
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()?.topic == "t/4")
        #expect(await iterator.next()?.topic == "t/5")
    }
}
