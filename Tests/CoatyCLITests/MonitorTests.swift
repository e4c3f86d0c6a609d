import CoatyCommunication
import CoatyModel
import CoatyTesting
import CoatyTransport
import Foundation
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

    /// A monitor whose connection drops reconnects and subscribes again, instead of giving up.
    @Test func reconnectsWhenTheConnectionDrops() async throws {
        let bus = InProcessBus()
        let (ready, readyContinuation) = AsyncStream.makeStream(of: Void.self)
        let reports = LineSink()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // A monitor that gives up ends the readiness stream, so the test fails at once.
                defer { readyContinuation.finish() }
                try await MonitorCommand.run(
                    MonitorOptions(),
                    transport: InProcessTransport(bus: bus),
                    reconnectDelay: .milliseconds(10),
                    ready: { readyContinuation.yield() },
                    report: { reports.append($0) }
                ) { _ in }
            }
            var readiness = ready.makeAsyncIterator()
            await readiness.next()
            let monitor = try #require(bus.clientIDs.first { $0.hasPrefix("CoatyMonitor") })
            #expect(bus.dropConnection(clientID: monitor))
            await readiness.next()
            group.cancelAll()
        }
        #expect(reports.lines.first?.hasPrefix("coaty monitor: lost the connection to the broker") == true)
        #expect(reports.lines.last == "coaty monitor: reconnected to the broker\n")
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

    /// The event and agent columns grow to the widest value seen, so later lines stay aligned with it.
    @Test func columnsStayAligned() throws {
        var formatter = MonitorFormatter()
        let longType = "com.example.a.very.long.object.type.Name"
        let lines = [
            formatter.line(topic: "coaty/3/-/ADV:CoatyObject/a", payload: [], time: "t"),
            formatter.line(topic: "coaty/3/-/ADV::\(longType)/b", payload: [], time: "t"),
            formatter.line(topic: "coaty/3/-/DAD/c", payload: [], time: "t"),
        ]
        let (short, long, after) = (try #require(lines[0]), try #require(lines[1]), try #require(lines[2]))
        // The agent column starts where the short event's padding ends, then past the long event.
        #expect(short.hasPrefix("t  ADV:CoatyObject" + String(repeating: " ", count: 28 - 15) + "  a"))
        #expect(long.hasPrefix("t  ADV::\(longType)  b"))
        #expect(after.hasPrefix("t  DAD" + String(repeating: " ", count: "ADV::\(longType)".count - 3) + "  c"))
        #expect(formatter.columnWidths == ["ADV::\(longType)".count, 24])
        // Every summary column starts at the same place once the widths are known.
        let summaries = [long, after].map { $0.firstRange(of: "  (not JSON")?.lowerBound.utf16Offset(in: $0) }
        #expect(summaries[0] == summaries[1])
    }

    @Test(arguments: [
        (false, [String: String](), false), (true, [:], true), (true, ["NO_COLOR": "1"], false),
        (true, ["NO_COLOR": ""], true), (true, ["TERM": "dumb"], false), (false, ["TERM": "xterm-256color"], false),
    ])
    func colourOnlyOnATerminalWithoutNoColor(isTerminal: Bool, environment: [String: String], expected: Bool) {
        #expect(MonitorStyle.usesColour(isTerminal: isTerminal, environment: environment) == expected)
    }

    @Test func colourLeavesTheColumnsAligned() throws {
        var formatter = MonitorFormatter()
        formatter.usesColour = true
        let coloured = formatter.line(topic: "coaty/3/-/ADV:CoatyObject/a", payload: [], time: "t")
        let line = try #require(coloured)
        #expect(line.hasPrefix("\u{1B}[2mt\u{1B}[0m  \u{1B}[32mADV:CoatyObject" + String(repeating: " ", count: 13)))
        formatter.usesColour = false
        #expect(
            formatter.line(topic: "coaty/3/-/ADV:CoatyObject/a", payload: [], time: "t")?.contains("\u{1B}") == false
        )
    }

    @Test func systemTopicsAreTopicEqualsValue() {
        var formatter = MonitorFormatter()
        #expect(
            formatter.line(topic: "$SYS/broker/clients/connected", payload: Array("3".utf8), time: "t")
                == "t  $SYS/broker/clients/connected = 3"
        )
        let json = MonitorJSON.line(topic: "$SYS/broker/uptime", payload: Array("12 seconds".utf8), time: "t")
        #expect(json == #"{"time":"t","topic":"$SYS/broker/uptime","value":"12 seconds"}"#)
    }

    @Test func jsonLinesCarryTheEventsFields() throws {
        let topic = "coaty/3/lab/RTN/1111/2222"
        let line = try #require(
            MonitorJSON.line(topic: topic, payload: Array(#"{"result":85}"#.utf8), time: "t") { _ in "Adder" }
        )
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "RTN")
        #expect(object["namespace"] as? String == "lab")
        #expect(object["sourceId"] as? String == "1111")
        #expect(object["correlationId"] as? String == "2222")
        #expect(object["agent"] as? String == "Adder")
        #expect((object["payload"] as? [String: Any])?["result"] as? Int == 85)
        #expect(!line.contains("\n"))
        let binary = try #require(MonitorJSON.line(topic: "coaty/3/-/IOV/3333", payload: [0x41, 0xFF], time: "t"))
        #expect(binary.contains(#""payload":"A\#u{FFFD}""#))
        #expect(MonitorJSON.line(topic: "other/topic", payload: [], time: "t") == nil)
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
