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
            // The sensor publishes once associated and leaves; the display leaves when its association
            // ends, the router when every association has ended.
            async let router = runProcess(executable, ["router"] + common)
            async let display = runProcess(executable, ["display", "--room", "hall"] + common)
            async let sensor = runProcess(executable, ["sensor", "--readings", "5"] + common)
            let (r, d, s) = try await (router, display, sensor)
            let report =
                "router:\n\(r.output)\(r.errorOutput)\ndisplay:\n\(d.output)\(d.errorOutput)\nsensor:\n\(s.output)\(s.errorOutput)"
            #expect(r.status == 0 && d.status == 0 && s.status == 0, Comment(rawValue: report))
            #expect(s.output.contains("published 5 readings"), Comment(rawValue: report))
            // IO values are fire-and-forget: a first reading sent before the display observed the route
            // may be lost, the last one not (the sensor is associated only after the display joined).
            #expect(d.output.contains("shows 20.5 °C (reading #5)"), Comment(rawValue: report))
            #expect(r.output.contains("Thermometer → hall display"), Comment(rawValue: report))
            #expect(
                d.output.contains("hall display: showed") && r.output.contains("every association has ended"),
                Comment(rawValue: report)
            )
        }
    }
}
