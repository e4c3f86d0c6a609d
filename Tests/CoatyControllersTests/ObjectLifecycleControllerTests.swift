import CoatyCommunication
import CoatyControllers
import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ObjectLifecycleControllerTests {
    /// Runs a tracking agent with an ObjectLifecycleController on `bus`.
    func withTracker<Result: Sendable>(
        bus: InProcessBus,
        name: String = "Tracker",
        bufferSize: Int = 256,  // the default observerBufferSize
        _ body: (Container, ObjectLifecycleController) async throws -> Result
    ) async throws -> Result {
        let lifecycle = ObjectLifecycleController()
        return try await Container.withRunning(
            configuration: .init(
                transport: InProcessTransport(bus: bus),
                communication: .init(identity: Identity(name: name), observerBufferSize: bufferSize)
            ),
            controllers: [lifecycle]
        ) { container in try await body(container, lifecycle) }
    }

    @Test func tracksAgentsThatWereThereJoinLaterLeaveAndDrop() async throws {
        let bus = InProcessBus()
        try await withOnlineManagers(count: 1, bus: bus) { early, _ in
            try await self.withTracker(bus: bus) { tracker, lifecycle in
                var changes = try await lifecycle.observeObjectLifecycleInfo(coreType: .identity)
                    .filter { !$0.added.contains { $0.name == "Tracker" } || $0.added.count > 1 }
                    .makeAsyncIterator()
                // The agent that was there first is found through the Discover's Resolve.
                let first = try #require(await changes.next())
                #expect(first.added.map(\.name) == ["Agent0"])

                // A late joiner is found through its Advertise; it leaves gracefully.
                try await withOnlineManagers(
                    count: 1,
                    bus: bus,
                    configure: { _, configuration in
                        configuration.identity = Identity(name: "Late")
                    }
                ) { _, _ in
                    let joined = try #require(await changes.next())
                    #expect(joined.added.map(\.name) == ["Late"])
                }
                let left = try #require(await changes.next())
                #expect(left.removed.map(\.name) == ["Late"])

                // An agent whose connection drops is removed through its last will.
                #expect(bus.dropConnection(clientID: early[0].clientID))
                let dropped = try #require(await changes.next())
                #expect(dropped.removed.map(\.name) == ["Agent0"])
                _ = tracker
            }
        }
    }

    /// Objects advertised and deadvertised back to back are all reported added and then removed:
    /// events are applied in the order they arrived, so a Deadvertise never overtakes the Advertise
    /// before it (which would bring the object back for good).
    @Test func advertiseAndDeadvertiseBackToBackKeepTheirOrder() async throws {
        let bus = InProcessBus()
        // A buffer for every change, so a slow consumer on a loaded machine drops none.
        try await self.withTracker(bus: bus, bufferSize: 1_000) { _, lifecycle in
            let changes = try await lifecycle.observeObjectLifecycleInfo(objectType: "com.example.Blip")
            try await withOnlineManagers(count: 1, bus: bus) { managers, _ in
                let count = 300
                for index in 0..<count {
                    let blip = CoatyObject(objectType: "com.example.Blip", name: "blip \(index)")
                    try await managers[0].publish(AdvertiseEvent(blip))
                    try await managers[0].publish(DeadvertiseEvent(objectIDs: [blip.objectID]))
                }
                var present = Set<ObjectID>()
                var removed = 0
                var inOrder = true
                for await change in changes {
                    for object in change.added { inOrder = present.insert(object.objectID).inserted && inOrder }
                    for object in change.removed { inOrder = present.remove(object.objectID) != nil && inOrder }
                    removed += change.removed.count
                    if removed == count { break }
                }
                #expect(inOrder)
                #expect(present.isEmpty)
            }
        }
    }

    @Test func discoverableObjectsAreResolvedChangedAndRemovedWithTheirAgent() async throws {
        let bus = InProcessBus()
        try await self.withTracker(bus: bus, name: "Watcher") { _, watcher in
            var changes = try await watcher.observeObjectLifecycleInfo(objectType: "com.example.Lamp")
                .makeAsyncIterator()
            let lampID: ObjectID = try await self.withTracker(bus: bus, name: "Owner") { owner, ownerLifecycle in
                let lamp = CoatyObject(objectType: "com.example.Lamp", name: "Lamp", customProperties: ["on": false])
                let advertised = try await ownerLifecycle.advertiseDiscoverableObject(lamp)
                #expect(advertised.parentObjectID == owner.identity.objectID)
                let added = try #require(await changes.next())
                #expect(added.added.map(\.objectID) == [lamp.objectID])

                // Another agent discovers it by id.
                try await withOnlineManagers(count: 1, bus: bus) { managers, _ in
                    let resolve = try await managers[0].discover(try DiscoverEvent.byObjectID(lamp.objectID))
                        .first(timeout: .seconds(5))
                    #expect(resolve.object?.customProperties["on"] == false)
                }

                // A changed version is reported as changed.
                let switched = CoatyObject(
                    objectType: "com.example.Lamp",
                    objectID: lamp.objectID,
                    name: "Lamp",
                    parentObjectID: owner.identity.objectID,
                    customProperties: ["on": true]
                )
                try ownerLifecycle.readvertiseDiscoverableObject(switched)
                var change = try #require(await changes.next())
                while change.changed.isEmpty { change = try #require(await changes.next()) }
                #expect(change.changed.first?.customProperties["on"] == true)
                return lamp.objectID
            }
            // The owner left: its lamp goes with it (parent cascade on the identity's Deadvertise).
            var change = try #require(await changes.next())
            while change.removed.isEmpty { change = try #require(await changes.next()) }
            #expect(change.removed.map(\.objectID) == [lampID])
        }
    }

    /// Tracking asked for after the container has shut down ends at once instead of never.
    @Test func trackingAfterShutdownFinishes() async throws {
        let (container, lifecycle) = try await self.withTracker(bus: InProcessBus()) { ($0, $1) }
        var changes = 0
        for await _ in try await lifecycle.observeObjectLifecycleInfo() { changes += 1 }
        #expect(changes == 0)
        _ = container
    }

    @Test func controllersAdvertiseLogObjects() async throws {
        let bus = InProcessBus()
        let logs = bus.messages()
        final class Talker: Controller {
            let name = "Requester"
            func onInit(context: ControllerContext) async throws {
                try context.logInfo("hello from A", tags: "golden", "test")
            }
        }
        let identity = try await Container.withRunning(
            configuration: .init(transport: InProcessTransport(bus: bus)),
            controllers: [Talker()]
        ) { $0.identity }
        var logMessage: TransportMessage?
        for await message in logs where message.topic.contains("/ADV:Log/") {
            logMessage = message
            break
        }
        let message = try #require(logMessage)
        #expect(message.topic == "coaty/3/-/ADV:Log/\(identity.objectID)")
        let object = try #require(try AnyCodable(json: message.payload)["object"])
        #expect(object["objectType"] == "coaty.Log")
        #expect(object["coreType"] == "Log")
        #expect(object["name"] == "Requester")
        #expect(object["logLevel"] == 20)
        #expect(object["logMessage"] == "hello from A")
        #expect(object["logTags"] == ["golden", "test"])
        #expect(object["logHost"]?["pid"]?.intValue != nil)
        let date = try #require(object["logDate"]?.stringValue)
        #expect(date.hasSuffix("Z") && date.count == 24)
    }
}
