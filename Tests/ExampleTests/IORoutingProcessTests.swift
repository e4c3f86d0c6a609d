import CoatyBroker
import TestSupport
import Testing

/// The io-routing agents as separate processes through the embedded broker.
@Suite(.timeLimit(.minutes(1)))
struct IORoutingProcessTests {
    @Test func routerSensorAndDisplayTalkThroughTheEmbeddedBroker() async throws {
        let executable = try #require(ChildProcess.builtExecutable(named: "io-routing"), "io-routing is not built")
        try await MQTTBroker.withRunning { broker in
            let common = [
                "--broker", "mqtt://127.0.0.1:\(broker.port)", "--namespace", "io-\(UInt32.random(in: 0...UInt32.max))",
            ]
            // The display leaves after showing three readings; the router then ends the thermometer's
            // association, so the sensor stops early and leaves, and the router once every association has
            // ended. IO values are fire-and-forget: readings sent before the display observed its route are
            // lost, so which three it shows depends on timing, that it shows three does not.
            async let router = runProcess(executable, ["router"] + common)
            async let display = runProcess(executable, ["display", "--room", "hall", "--shows", "3"] + common)
            async let sensor = runProcess(executable, ["sensor", "--readings", "100"] + common)
            let (r, d, s) = try await (router, display, sensor)
            let report =
                "router:\n\(r.output)\(r.errorOutput)\ndisplay:\n\(d.output)\(d.errorOutput)\nsensor:\n\(s.output)\(s.errorOutput)"
            #expect(r.status == 0 && d.status == 0 && s.status == 0, Comment(rawValue: report))
            // It leaves after the third; readings that arrive while it leaves are shown too.
            let shown = d.output.split(separator: "\n").filter { $0.contains("IO value") }.count
            #expect(shown >= 3 && d.output.contains("hall display: showed #"), Comment(rawValue: report))
            #expect(s.output.contains("readings before its association ended; leaving"), Comment(rawValue: report))
            #expect(r.output.contains("Thermometer → hall display"), Comment(rawValue: report))
            #expect(r.output.contains("every association has ended"), Comment(rawValue: report))
        }
    }
}
