import CoatyBroker
import CoatyCommunication
import CoatyMQTT
import CoatyTransport
import Testing

@testable import IORouting

/// The io-routing scene in one process: over the in-process transport, and through the embedded broker.
@Suite(.timeLimit(.minutes(1)))
struct IORoutingSceneTests {
    /// 10 readings: the living room shows #1–#8, the hall joins for #5 and shows #5–#10.
    static let readings = 10

    @Test func displaysShowWhatTheRouterAssociatesInProcess() async throws {
        let lines = Lines()
        let bus = InProcessBus()
        let result = try await HomeScene.run(
            readings: Self.readings,
            pacing: .zero,
            narrator: Narrator { lines.append($0) }
        ) { InProcessTransport(bus: bus) }

        #expect(result == HomeScene.expected(readings: Self.readings))
        #expect(result.livingRoom == Array(1...8) && result.hall == Array(5...10))
        let printed = lines.all
        #expect(printed.contains { $0.contains("Thermometer → living room display on coaty/3/-/IOV/") })
        #expect(printed.contains { $0.contains("Thermometer → hall display") })
        #expect(printed.contains { $0.contains("livingRoomOccupied = false: the router completed the context update") })
        #expect(printed.contains { $0.contains("Thermometer ↛ living room display: association ended") })
        #expect(printed.contains { $0.contains("hall") && $0.contains("shows 21.0 °C (reading #10)") })
        let summary = HomeScene.summary(result, readings: Self.readings)
        #expect(summary.contains("  the living room display showed #1–#8 (8 readings): as expected"))
    }

    @Test func displaysShowWhatTheRouterAssociatesThroughTheEmbeddedBroker() async throws {
        let result = try await MQTTBroker.withRunning { broker in
            try await HomeScene.run(readings: Self.readings, pacing: .zero, narrator: Narrator { _ in }) {
                MQTTTransport(brokerURL: "mqtt://127.0.0.1:\(broker.port)")
            }
        }
        #expect(result == HomeScene.expected(readings: Self.readings))
    }

    /// A scene that cannot get going (here: no agent ever connects) ends with a clear error once its
    /// time is up, and its agents stop.
    @Test func aStuckSceneEndsWithAnError() async throws {
        let error = await #expect(throws: ExampleError.self) {
            try await HomeScene.run(
                readings: 5,
                pacing: .zero,
                timeout: .milliseconds(200),
                narrator: Narrator { _ in }
            ) {
                NeverConnectingTransport()
            }
        }
        #expect(error?.description.hasPrefix("the scene did not finish within 0.2 seconds") == true)
    }

    @Test(arguments: [3, 5, 20, 100])
    func phasesSplitTheReadings(readings: Int) {
        let expected = HomeScene.expected(readings: readings)
        // Both displays show something of their own and something together, and together all readings.
        let shared = Set(expected.livingRoom).intersection(expected.hall)
        #expect(!shared.isEmpty && shared.count < expected.hall.count && shared.count < expected.livingRoom.count)
        #expect(Set(expected.livingRoom).union(expected.hall) == Set(1...readings))
    }

    @Test func describesReadings() {
        #expect(HomeScene.describe([1, 2, 3]) == "#1–#3 (3 readings)")
        #expect(HomeScene.describe([1, 3]) == "#1 #3")
        #expect(HomeScene.describe([]) == "no readings")
        #expect(Home.format(Home.celsius(reading: 10)) == "21.0 °C")
        #expect(Home.reading(celsius: Home.celsius(reading: 17)) == 17)
    }

    @Test(arguments: [
        ([], Options.Role.scene), (["--readings", "5"], .scene), (["router", "--broker", "mqtt://h:1"], .router),
        (["display", "--room", "hall"], .display), (["sensor", "--namespace", "n"], .sensor), (["-h"], .help),
    ])
    func commandLines(arguments: [String], role: Options.Role) throws {
        #expect(try Options(parsing: arguments).role == role)
    }

    @Test func aDisplayCanBeToldHowManyReadingsToShow() throws {
        #expect(try Options(parsing: ["display", "--shows", "3"]).shows == 3)
        #expect(try Options(parsing: ["display"]).shows == nil)
    }

    @Test(arguments: [
        ["--readings", "2"], ["display", "--broker", "tcp://x"], ["kitchen"], ["--room"], ["--room", ""],
        ["display", "--shows", "0"], ["display", "--shows", "x"],
    ])
    func badCommandLinesAreUsageErrors(arguments: [String]) {
        #expect(throws: Options.UsageError.self) { try Options(parsing: arguments) }
    }
}

/// A transport whose connection attempts wait until they are cancelled.
struct NeverConnectingTransport: Transport {
    func withConnection<Result: Sendable>(
        _ options: TransportConnectOptions,
        onMessage: @escaping @Sendable (TransportMessage) -> Void,
        _ body: (any TransportConnection) async throws -> Result
    ) async throws -> Result {
        try await Task.sleep(for: .seconds(3600))
        throw CancellationError()
    }
}

/// `io-routing` takes its broker, namespace and credentials from COATY_* variables where the command
/// line does not give them.
struct IORoutingEnvironmentTests {
    @Test func theEnvironmentSetsTheConnectionAndTheCommandLineWins() throws {
        let environment = ["COATY_BROKER_URL": "mqtt://broker.example:1884", "COATY_NAMESPACE": "home"]
        let options = try Options(parsing: ["sensor"], environment: environment)
        #expect(options.broker == "mqtt://broker.example:1884")
        #expect(options.namespace == "home")
        #expect(options.username == nil)
        let overridden = try Options(parsing: ["sensor", "--broker", "mqtt://127.0.0.1:1"], environment: environment)
        #expect(overridden.broker == "mqtt://127.0.0.1:1")
    }
}
