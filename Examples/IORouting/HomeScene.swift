import CoatyCommunication
import CoatyControllers
import CoatyModel
import CoatyTransport

/// The whole io-routing scene in one process, each agent with its own transport connection: a router
/// for the home's IO context, a display in the living room, a sensor agent with a thermometer, and
/// later a display in the hall.
///
/// 1. The router associates the thermometer with the living room display; readings `1...firstPhaseEnd`
///    go there.
/// 2. The hall display joins: the router associates it too, and both show the next readings, up to
///    `secondPhaseEnd`.
/// 3. The sensor reports that the living room is empty by updating the IO context; the router's rule
///    ends the living room's association, and only the hall shows the last readings.
///
/// Each phase starts once the controllers report the associations it needs (the sensor's readings go
/// out, the display's route is observed) and the previous phase's last reading was shown, so what
/// each display shows does not depend on timing.
enum HomeScene {
    /// The reading numbers each display showed.
    struct Result: Sendable, Equatable {
        var livingRoom: [Int]
        var hall: [Int]
    }

    /// What the displays show when `readings` readings are published: the living room the first two
    /// phases, the hall the last two.
    static func expected(readings: Int) -> Result {
        let (first, second) = self.phaseEnds(readings: readings)
        return Result(livingRoom: Array(1...second), hall: Array((first + 1)...readings))
    }

    /// The last readings of the first and second phases: two fifths and four fifths of them.
    static func phaseEnds(readings: Int) -> (Int, Int) {
        let first = max(1, readings * 2 / 5)
        return (first, max(first + 1, readings * 4 / 5))
    }

    /// Runs the scene and returns what the displays showed.
    ///
    /// - Parameters:
    ///   - readings: How many readings the sensor publishes, at least 3.
    ///   - pacing: The time between two readings.
    ///   - timeout: How long the scene may take before it gives up.
    ///   - narrator: Tells what happens.
    ///   - makeTransport: Makes each agent's transport.
    /// - Throws: ``ExampleError`` if the scene gets stuck or does not finish in time; what the agents
    ///   throw.
    static func run(
        readings: Int,
        pacing: Duration,
        timeout: Duration = .seconds(20),
        narrator: Narrator,
        makeTransport: @escaping @Sendable () -> any Transport
    ) async throws -> Result {
        let livingRoom = DisplayController(room: "living room", narrator: narrator)
        let hall = DisplayController(room: "hall", narrator: narrator)
        let outcome = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await self.play(
                    readings: readings,
                    pacing: pacing,
                    displays: (livingRoom, hall),
                    narrator: narrator,
                    makeTransport: makeTransport
                )
                return true
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return false
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        let result = Result(livingRoom: livingRoom.shown, hall: hall.shown)
        guard outcome else {
            throw ExampleError(
                description: "the scene did not finish within \(timeout): the living room display showed "
                    + "\(result.livingRoom.count) readings, the hall display \(result.hall.count)"
            )
        }
        return result
    }

    private static func play(
        readings: Int,
        pacing: Duration,
        displays: (livingRoom: DisplayController, hall: DisplayController),
        narrator: Narrator,
        makeTransport: @escaping @Sendable () -> any Transport
    ) async throws {
        @Sendable func configuration(_ name: String, _ nodes: [IONode] = []) -> Container.Configuration {
            Container.Configuration(
                transport: makeTransport(),
                communication: .init(identity: Identity(name: name), ioNodes: nodes)
            )
        }
        let (livingRoom, hall) = displays
        let (firstEnd, secondEnd) = self.phaseEnds(readings: readings)
        var livingRoomShown = livingRoom.readings.makeAsyncIterator()
        var hallShown = hall.readings.makeAsyncIterator()
        let router = IORouter(context: Home.context(), rules: Home.rules)
        let sensor = SensorController(narrator: narrator)

        narrator.say("The router, the living room display and the sensor join.")
        try await Container.withRunning(
            configuration: configuration("router"),
            controllers: [router, RouterLog(router: router, narrator: narrator)]
        ) { _ in
            narrator.event("router", "rules", Home.rules.map(\.name).joined(separator: "; "))
            try await Container.withRunning(
                configuration: configuration("living room display", [livingRoom.node]),
                controllers: livingRoom.controllers
            ) { _ in
                try await Container.withRunning(
                    configuration: configuration("sensor", [sensor.node]),
                    controllers: sensor.controllers
                ) { _ in
                    _ = try await sensor.association().first { $0 }
                    _ = try await livingRoom.association().first { $0 }
                    try await sensor.publish(readings: 1...firstEnd, pacing: pacing)
                    try await self.wait(until: firstEnd, in: &livingRoomShown, of: livingRoom)

                    narrator.say("The hall display joins; the router associates the thermometer with it too.")
                    try await Container.withRunning(
                        configuration: configuration("hall display", [hall.node]),
                        controllers: hall.controllers
                    ) { _ in
                        _ = try await hall.association().first { $0 }
                        try await sensor.publish(readings: (firstEnd + 1)...secondEnd, pacing: pacing)
                        try await self.wait(until: secondEnd, in: &livingRoomShown, of: livingRoom)

                        narrator.say(
                            "Everyone leaves the living room; the sensor tells the router by updating the IO context."
                        )
                        try await sensor.reportLivingRoom(occupied: false)
                        _ = try await livingRoom.association().first { !$0 }
                        try await sensor.publish(readings: (secondEnd + 1)...readings, pacing: pacing)
                        try await self.wait(until: readings, in: &hallShown, of: hall)
                        narrator.say("The hall display, the sensor, the living room display and the router leave.")
                    }
                }
            }
        }
    }

    /// Waits until `display` has shown reading `number`.
    private static func wait(
        until number: Int,
        in shown: inout AsyncStream<Int>.Iterator,
        of display: DisplayController
    ) async throws {
        while let reading = await shown.next() {
            if reading >= number { return }
        }
        throw ExampleError(description: "the \(display.room) display stopped before it showed reading #\(number)")
    }

    /// The closing lines: what each display showed, against what was expected.
    static func summary(_ result: Result, readings: Int) -> [String] {
        let expected = self.expected(readings: readings)
        func line(_ room: String, _ shown: [Int], _ wanted: [Int]) -> String {
            let verdict = shown == wanted ? "as expected" : "expected \(describe(wanted))"
            return "  the \(room) display showed \(describe(shown)): \(verdict)"
        }
        return [
            "", "Summary:",
            line("living room", result.livingRoom, expected.livingRoom),
            line("hall", result.hall, expected.hall),
        ]
    }

    /// Reading numbers in short: `#1–#16 (16 readings)`, or each one if they are not consecutive.
    static func describe(_ numbers: [Int]) -> String {
        guard let first = numbers.first, let last = numbers.last else { return "no readings" }
        if numbers == Array(first...last) { return "#\(first)–#\(last) (\(numbers.count) readings)" }
        return numbers.map { "#\($0)" }.joined(separator: " ")
    }
}
