import CoatyCommunication
import CoatyControllers
import CoatyCore
import CoatyModel
import CoatyTesting
import Testing

/// `ThingSensorObservationObserverController` following a source agent: things found by Discover or
/// Advertise, their sensors by Query or Advertise, observations with their sensor and thing, and
/// removal on Deadvertise.
@Suite(.timeLimit(.minutes(1)))
struct ThingSensorObservationObserverControllerTests {
    let fixture = SensorThingsFixture()

    /// The observer joins after the source: it discovers the thing and queries its sensors.
    @Test func aLateObserverDiscoversThingsAndQueriesTheirSensors() async throws {
        let bus = InProcessBus()
        let sources = SensorSourceController(sensors: [
            .init(self.fixture.thermometer, io: InMemorySensorIO(value: 20)),
            .init(self.fixture.hygrometer, io: InMemorySensorIO(value: 40)),
        ])
        let observer = ThingSensorObservationObserverController()
        try await self.fixture.withSource(bus: bus, [sources]) { _ in
            var messages = bus.messages().makeAsyncIterator()
            try await self.fixture.withObserver(bus: bus, [observer]) { container in
                var changes = observer.sensorChanges().makeAsyncIterator()
                var observations = observer.observations().makeAsyncIterator()
                var total: [ThingSensorObservationObserverController.RegisteredSensor] = []
                while total.count < 2, let change = await changes.next() { total = change.total }
                #expect(total.map(\.sensor.name) == ["Thermometer", "Hygrometer"])
                #expect(total.allSatisfy { $0.thing.objectID == self.fixture.room.objectID })
                #expect(observer.registeredSensors.count == 2)

                // What went out: a Discover for things, then a Query for the room's sensors.
                let me = container.identity.objectID
                let discover = try await next(&messages) { $0.hasPrefix("coaty/3/-/DSC/\(me)/") }
                #expect(try json(discover) == ["objectTypes": ["coaty.sensorThings.Thing"]])
                let query = try await next(&messages) { $0.hasPrefix("coaty/3/-/QRY/\(me)/") }
                #expect(
                    try json(query)["objectFilter"] == [
                        "conditions": ["parentObjectId", [7, .string(self.fixture.room.objectID.rawValue)]]
                    ]
                )

                // Observations are subscribed before a sensor is reported: none is missed.
                let sent = try await sources.publishObservation(of: self.fixture.hygrometer.objectID)
                let reading = try #require(await observations.next())
                #expect(reading.observation.objectID == sent.objectID && reading.observation.result == 40)
                #expect(reading.sensor.sensor.objectID == self.fixture.hygrometer.objectID)
                #expect(reading.sensor.thing.name == "Room 1")

                // An unregistered sensor is deadvertised and removed.
                try sources.unregister(self.fixture.thermometer.objectID)
                let removal = try #require(await changes.next())
                #expect(removal.removed.map(\.sensor.objectID) == [self.fixture.thermometer.objectID])
                #expect(removal.total.map(\.sensor.objectID) == [self.fixture.hygrometer.objectID])
                #expect(removal.added.isEmpty && removal.changed.isEmpty)
            }
        }
    }

    /// The observer joins first: the thing's Advertise brings it, a sensor advertised later is added,
    /// one advertised again is changed, and the owner leaving removes its thing's sensors; filtered
    /// things and sensors are ignored.
    @Test func anEarlyObserverFollowsAdvertisesAndTheOwnerLeaving() async throws {
        let bus = InProcessBus()
        // Without Deadvertises of its own, so that only the owner leaving can remove its sensors.
        let sources = SensorSourceController(
            sensors: [.init(self.fixture.thermometer, io: InMemorySensorIO())],
            options: .init(deadvertisesSensors: false)
        )
        let other = SensorThingsFixture(ownerName: "Other")
        let observer = ThingSensorObservationObserverController(
            thingFilter: { $0.objectID != other.room.objectID },
            sensorFilter: { sensor, _ in sensor.name != "Ignored" }
        )
        let otherSources = SensorSourceController(sensors: [.init(other.thermometer, io: InMemorySensorIO())])
        try await self.fixture.withObserver(bus: bus, [observer]) { _ in
            var changes = observer.sensorChanges().makeAsyncIterator()
            var seen: [ThingSensorObservationObserverController.SensorChange] = []
            /// The next change satisfying `predicate`; a sensor received twice (Query and Advertise)
            /// also comes as a change, as in coaty-js.
            func next(
                where predicate: (ThingSensorObservationObserverController.SensorChange) -> Bool
            ) async throws -> ThingSensorObservationObserverController.SensorChange {
                while let change = await changes.next() {
                    seen.append(change)
                    if predicate(change) { return change }
                }
                throw CancellationError()
            }
            let initial = try await next { _ in true }
            #expect(initial.total.isEmpty && initial.added.isEmpty)
            try await other.withSource(bus: bus, [otherSources]) { _ in
                try await self.fixture.withSource(bus: bus, [sources]) { source in
                    _ = try await next { $0.added.map(\.sensor.name) == ["Thermometer"] }

                    try sources.register(
                        SensorThingsFixture.sensor("Ignored", of: self.fixture.room, unit: "x"),
                        io: InMemorySensorIO()
                    )
                    try sources.register(self.fixture.hygrometer, io: InMemorySensorIO())
                    let hygrometer = try await next { $0.added.map(\.sensor.name) == ["Hygrometer"] }
                    #expect(hygrometer.total.map(\.sensor.name) == ["Thermometer", "Hygrometer"])

                    // Advertised again: changed, not added.
                    try await source.communication.publish(AdvertiseEvent(self.fixture.hygrometer))
                    let changed = try await next { $0.changed.map(\.sensor.name) == ["Hygrometer"] }
                    #expect(changed.added.isEmpty && changed.total.count == 2)
                }
                // The source agent left: its identity's Deadvertise names the room's parent, which
                // removes the room's sensors in one change.
                let left = try await next { !$0.removed.isEmpty }
                #expect(left.removed.map(\.sensor.name) == ["Thermometer", "Hygrometer"])
                #expect(left.total.isEmpty)
            }
            // The filtered thing's sensor and the filtered sensor never came.
            let names = Set(seen.flatMap { $0.total + $0.added + $0.changed }.map(\.sensor.objectID))
            #expect(names == Set([self.fixture.thermometer, self.fixture.hygrometer].map(\.objectID)))
        }
    }
}
