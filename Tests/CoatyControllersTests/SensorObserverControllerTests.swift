import CoatyCommunication
import CoatyControllers
import CoatyCore
import CoatyModel
import CoatyTesting
import Testing

/// `SensorObserverController` against a `SensorSourceController` agent: the requests it sends are
/// coaty-js's, and what comes back is what the source publishes.
@Suite(.timeLimit(.minutes(1)))
struct SensorObserverControllerTests {
    let fixture = SensorThingsFixture()

    /// Runs a source agent with both sensors and an observer agent; `body` gets the tap too, started
    /// once both are online.
    func withAgents(
        _ body: (SensorSourceController, SensorObserverController, Container, InProcessBus) async throws -> Void
    ) async throws {
        let bus = InProcessBus()
        let sources = SensorSourceController(sensors: [
            .init(self.fixture.thermometer, io: InMemorySensorIO(value: 20)),
            .init(self.fixture.hygrometer, io: InMemorySensorIO(value: 40)),
        ])
        let observer = SensorObserverController()
        try await self.fixture.withSource(bus: bus, [sources]) { _ in
            try await self.fixture.withObserver(bus: bus, [observer]) { container in
                try await body(sources, observer, container, bus)
            }
        }
    }

    /// `discoverSensors()` sends coaty-js's Discover and yields every sensor; `querySensors(ofThing:)`
    /// sends coaty-js's Query (`parentObjectId` Equals, operator 7) and yields the thing's sensors.
    @Test func sensorsAreDiscoveredAndQueriedByThing() async throws {
        try await self.withAgents { _, observer, container, bus in
            var messages = bus.messages().makeAsyncIterator()
            let me = container.identity.objectID
            var discovered = try await observer.discoverSensors().makeAsyncIterator()
            let names = [await discovered.next()?.name, await discovered.next()?.name]
            #expect(names == ["Thermometer", "Hygrometer"])
            let discover = try await next(&messages) { $0.hasPrefix("coaty/3/-/DSC/\(me)/") }
            #expect(try json(discover) == ["objectTypes": ["coaty.sensorThings.Sensor"]])

            let sensors = try await observer.querySensors(ofThing: self.fixture.room.objectID).first(
                timeout: .seconds(5)
            )
            #expect(sensors.map(\.objectID) == [self.fixture.thermometer, self.fixture.hygrometer].map(\.objectID))
            let query = try await next(&messages) { $0.hasPrefix("coaty/3/-/QRY/\(me)/") }
            #expect(
                try json(query)
                    == [
                        "objectTypes": ["coaty.sensorThings.Sensor"],
                        "objectFilter": [
                            "conditions": ["parentObjectId", [7, .string(self.fixture.room.objectID.rawValue)]]
                        ],
                    ]
            )
        }
    }

    /// Channelled and advertised observations of one sensor arrive with their values; observations of
    /// other sensors, other objects on the channel, and a malformed observation (dropped and reported)
    /// do not.
    @Test func observationsOfOneSensorArrive() async throws {
        try await self.withAgents { sources, observer, container, bus in
            let thermometer = self.fixture.thermometer.objectID
            var channelled = try await observer.observeChanneledObservations(of: thermometer).makeAsyncIterator()
            var advertised = try await observer.observeAdvertisedObservations(of: thermometer).makeAsyncIterator()
            let diagnostics = container.communication.observeDiagnostics()

            try await sources.publishObservation(of: self.fixture.hygrometer.objectID, as: .advertise)
            // Published by hand on the thermometer's channel: another sensor's observation, a plain
            // object, and an observation with a negative time.
            let owner = self.fixture.owner.objectID
            let stranger = SensorObservation(
                name: "x",
                phenomenonTime: 1,
                result: 0,
                resultTime: 1,
                parentObjectID: self.fixture.hygrometer.objectID
            )
            let malformed =
                #"{"object":{"objectId":"m","name":"m","coreType":"CoatyObject","objectType":"coaty.sensorThings.Observation","phenomenonTime":-1,"result":0,"resultTime":1,"parentObjectId":"\#(thermometer)"}}"#
            try await publishRaw(
                on: bus,
                [
                    (
                        "coaty/3/-/CHN:\(thermometer)/\(owner)",
                        String(
                            decoding: try CoatyJSONEncoder().encode(["object": try stranger.jsonValue] as AnyCodable),
                            as: UTF8.self
                        )
                    ),
                    (
                        "coaty/3/-/CHN:\(thermometer)/\(owner)",
                        #"{"object":{"objectId":"o","name":"o","coreType":"CoatyObject","objectType":"coaty.sensorThings.Observation2"}}"#
                    ),
                    ("coaty/3/-/CHN:\(thermometer)/\(owner)", malformed),
                ]
            )
            let sent = try await sources.publishObservation(of: thermometer)
            let received = try #require(await channelled.next())
            #expect(received.objectID == sent.objectID && received.result == 20)
            let diagnostic = try #require(await diagnostics.first { _ in true })
            #expect(diagnostic.kind == .invalidInboundEvent && diagnostic.topic.contains("CHN:\(thermometer)"))

            let advertisedSent = try await sources.publishObservation(of: thermometer, as: .advertise)
            #expect(await advertised.next()?.objectID == advertisedSent.objectID)
        }
    }

    /// Sensors registered later are advertised to `observeAdvertisedSensors()`; an invalid channel id
    /// is refused, and nothing works before the container initialised the controller.
    @Test func advertisedSensorsArriveAndBadInputIsRefused() async throws {
        await #expect { try await SensorObserverController().discoverSensors() } throws: {
            ($0 as? CommunicationError)?.code == .notRunning
        }
        try await self.withAgents { sources, observer, _, _ in
            var sensors = try await observer.observeAdvertisedSensors().makeAsyncIterator()
            let barometer = SensorThingsFixture.sensor("Barometer", of: self.fixture.room, unit: "hPa")
            try sources.register(barometer, io: InMemorySensorIO())
            // The source's own sensors were advertised when it joined, through its send loop, so their
            // Advertises may still arrive after this subscription: the first other sensor must be the
            // barometer.
            let fixtureSensors = [self.fixture.thermometer.objectID, self.fixture.hygrometer.objectID]
            var next = await sensors.next()
            while let sensor = next, fixtureSensors.contains(sensor.objectID) { next = await sensors.next() }
            #expect(next?.objectID == barometer.objectID)
            await #expect { try await observer.observeChanneledObservations(of: "s", channelID: "a/b") } throws: {
                ($0 as? CommunicationError)?.code == .invalidArgument
            }
        }
    }
}
