import CoatyCommunication
import CoatyControllers
import CoatyCore
import CoatyModel
import CoatyTesting
import Testing

/// `ThingObserverController` against an agent that owns a thing: coaty-js's Discover and Query, and
/// advertised things.
@Suite(.timeLimit(.minutes(1)))
struct ThingObserverControllerTests {
    let fixture = SensorThingsFixture()

    @Test func thingsAreDiscoveredAdvertisedAndQueriedByLocation() async throws {
        let bus = InProcessBus()
        let things = ThingObserverController()
        try await self.fixture.withObserver(bus: bus, [things]) { container in
            var advertised = try await things.observeAdvertisedThings().makeAsyncIterator()
            try await self.fixture.withSource(bus: bus, []) { source in
                #expect(await advertised.next()?.objectID == self.fixture.room.objectID)

                var messages = bus.messages().makeAsyncIterator()
                let me = container.identity.objectID
                let discovered = try await things.discoverThings().first(timeout: .seconds(5))
                #expect(
                    discovered.objectID == self.fixture.room.objectID && discovered.thingDescription == "A meeting room"
                )
                let discover = try await next(&messages) { $0.hasPrefix("coaty/3/-/DSC/\(me)/") }
                #expect(try json(discover) == ["objectTypes": ["coaty.sensorThings.Thing"]])

                // The owner answers Queries as an app would, with the filter applied.
                let room = self.fixture.room
                _ = await source.communication.handleQuery { query in
                    guard query.objectTypes == [Thing.objectType] else { return }
                    try query.retrieve(RetrieveEvent(objects: query.objectFilter.apply(to: [room])))
                }
                let atFloor = try await things.queryThings(atLocation: "floor-1").first(timeout: .seconds(5))
                #expect(atFloor.map(\.objectID) == [room.objectID])
                let query = try await next(&messages) { $0.hasPrefix("coaty/3/-/QRY/\(me)/") }
                #expect(
                    try json(query)
                        == [
                            "objectTypes": ["coaty.sensorThings.Thing"],
                            "objectFilter": ["conditions": ["locationId", [7, "floor-1"]]],
                        ]
                )
            }
        }
    }
}
