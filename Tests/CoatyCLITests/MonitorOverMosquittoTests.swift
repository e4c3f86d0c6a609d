import CoatyCore
import CoatyMQTT
import CoatyTransport
import Foundation
import TestSupport
import Testing

@testable import CoatyCLI

/// `coaty monitor` against mosquitto: it outlives a broker restart, prints JSON for scripts, and shows
/// the broker's `$SYS` statistics when asked.
@Suite(.enabled(if: Mosquitto.isAvailable, "mosquitto is not installed"), .timeLimit(.minutes(1)))
struct MonitorOverMosquittoTests {
    static let advertise = (
        topic: "coaty/3/-/ADV:CoatyObject/11111111-2222-3333-4444-555555555555",
        payload: Array(
            #"{"object":{"coreType":"CoatyObject","objectType":"com.example.Thing","name":"Thing42","objectId":"66666666-7777-8888-9999-000000000000"}}"#
                .utf8
        )
    )

    /// mosquitto stops and starts again on the same port: the monitor reconnects, subscribes again and
    /// shows an event published after the restart.
    @Test func reconnectsAfterABrokerRestart() async throws {
        let port = try Mosquitto.freePort()
        var process = try await Mosquitto.start(port: port)
        defer { Mosquitto.kill(process) }
        let url = "mqtt://127.0.0.1:\(port)"
        let lines = LineSink()
        let reports = LineSink()
        let (ready, readyContinuation) = AsyncStream.makeStream(of: Void.self)
        let options = {
            var options = MonitorOptions()
            options.connection.broker = url
            options.count = 1
            return options
        }()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // A monitor that gives up ends the readiness stream, so the test fails at once.
                defer { readyContinuation.finish() }
                try await MonitorCommand.run(
                    options,
                    transport: try TransportFactory.make(options.connection),
                    reconnectDelay: .milliseconds(100),
                    ready: { readyContinuation.yield() },
                    report: { reports.append($0) }
                ) { lines.append($0) }
            }
            var readiness = ready.makeAsyncIterator()
            _ = await readiness.next()
            Mosquitto.kill(process)
            process = try await Mosquitto.start(port: port)
            _ = await readiness.next()  // subscribed again
            try await MQTTTransport(brokerURL: url).withConnection(.init(clientID: "publisher"), onMessage: { _ in }) {
                try await $0.publish(TransportMessage(topic: Self.advertise.topic, payload: Self.advertise.payload))
            }
            try await group.waitForAll()
        }
        #expect(lines.lines.count == 1)
        #expect(lines.lines.first?.contains(#"com.example.Thing "Thing42""#) == true, "\(lines.lines)")
        #expect(reports.lines.first?.hasPrefix("coaty monitor: lost the connection to the broker") == true)
        #expect(reports.lines.last == "coaty monitor: reconnected to the broker\n")
    }

    /// `--json`: every line is one JSON object that JSONSerialization reads, events and `$SYS` topics.
    @Test func printsOneJSONObjectPerLine() async throws {
        let executable = try #require(InterruptTests.executable, "coaty is not built")
        try await Mosquitto.withRunning { mosquitto in
            // Retained, so the monitor gets it whenever it subscribes.
            try await MQTTTransport(brokerURL: mosquitto.url).withConnection(
                .init(clientID: "publisher"),
                onMessage: { _ in }
            ) {
                try await $0.publish(
                    TransportMessage(topic: Self.advertise.topic, payload: Self.advertise.payload, retain: true)
                )
            }
            let result = try await runProcess(
                executable,
                ["monitor", "--json", "--sys", "--count", "4", "--broker", mosquitto.url]
            )
            #expect(result.status == 0, "\(result.errorOutput)")
            let objects = try result.output.split(separator: "\n").map { line in
                try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            }
            #expect(objects.count == 4)
            let event = try #require(objects.first { $0["event"] != nil })
            #expect(event["event"] as? String == "ADV")
            #expect(event["filter"] as? String == "CoatyObject")
            #expect(event["namespace"] as? String == "-")
            #expect(event["sourceId"] as? String == "11111111-2222-3333-4444-555555555555")
            #expect(event["objectType"] as? String == "com.example.Thing")
            #expect(event["objectIds"] as? [String] == ["66666666-7777-8888-9999-000000000000"])
            #expect(event["topic"] as? String == Self.advertise.topic)
            #expect(
                ((event["payload"] as? [String: Any])?["object"] as? [String: Any])?["name"] as? String == "Thing42"
            )
            #expect((event["time"] as? String)?.hasSuffix("Z") == true)
            let statistics = objects.filter { ($0["topic"] as? String)?.hasPrefix("$SYS/broker/") == true }
            #expect(statistics.count == 3)
            #expect(statistics.allSatisfy { $0["value"] is String && $0["time"] is String })
        }
    }

    /// `--sys` shows mosquitto's statistics as `topic = value` lines; without it, none.
    @Test func showsTheBrokersStatisticsWhenAsked() async throws {
        let executable = try #require(InterruptTests.executable, "coaty is not built")
        try await Mosquitto.withRunning { mosquitto in
            let result = try await runProcess(
                executable,
                ["monitor", "--sys", "--count", "2", "--broker", mosquitto.url]
            )
            #expect(result.status == 0, "\(result.errorOutput)")
            let lines = result.output.split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines.allSatisfy { $0.contains("  $SYS/broker/") && $0.contains(" = ") }, "\(result.output)")
            // Piped: no colour.
            #expect(!result.output.contains("\u{1B}["))
        }
    }
}
