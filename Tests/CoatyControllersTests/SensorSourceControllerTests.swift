import CoatyCommunication
import CoatyControllers
import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Foundation
import Testing

/// `SensorSourceController` on the wire: what it advertises, answers and publishes, checked against
/// what coaty-js's `SensorSourceController` sends, through the bus tap.
@Suite(.timeLimit(.minutes(1)))
struct SensorSourceControllerTests {
    let fixture = SensorThingsFixture()

    /// Registered sensors are advertised on `ADV:CoatyObject` and `ADV::coaty.sensorThings.Sensor`;
    /// unregistering one deadvertises it, and shutting down deadvertises the rest in one event.
    @Test func sensorsAreAdvertisedAndDeadvertised() async throws {
        let bus = InProcessBus()
        var messages = bus.messages().makeAsyncIterator()
        let sources = SensorSourceController(sensors: [.init(self.fixture.thermometer, io: InMemorySensorIO())])
        let owner = self.fixture.owner.objectID
        let prefix = "coaty/3/-/"
        try await self.fixture.withSource(bus: bus, [sources]) { _ in
            let sensorJSON = try self.fixture.thermometer.jsonValue
            var topics: Set<String> = []
            while topics.count < 2 {
                let advertise = try await next(&messages) { $0.hasPrefix("\(prefix)ADV:") }
                guard try json(advertise)["object"]?["objectId"] == .string(self.fixture.thermometer.objectID.rawValue)
                else { continue }
                #expect(try json(advertise) == ["object": sensorJSON])
                topics.insert(advertise.topic)
            }
            #expect(
                topics == [
                    "\(prefix)ADV:CoatyObject/\(owner)", "\(prefix)ADV::coaty.sensorThings.Sensor/\(owner)",
                ]
            )

            #expect(try sources.register(self.fixture.hygrometer, io: InMemorySensorIO()) == true)
            #expect(try sources.register(self.fixture.hygrometer, io: InMemorySensorIO()) == false)
            #expect(
                sources.registeredSensors.map(\.objectID)
                    == [self.fixture.thermometer, self.fixture.hygrometer].map(\.objectID)
            )
            let hygrometer = try await next(&messages) { $0 == "\(prefix)ADV::coaty.sensorThings.Sensor/\(owner)" }
            #expect(try json(hygrometer)["object"]?["objectId"] == .string(self.fixture.hygrometer.objectID.rawValue))

            #expect(try sources.unregister(self.fixture.thermometer.objectID) == true)
            #expect(try sources.unregister(self.fixture.thermometer.objectID) == false)
            #expect(!sources.isRegistered(self.fixture.thermometer.objectID))
            let deadvertise = try await next(&messages) { $0 == "\(prefix)DAD/\(owner)" }
            #expect(try json(deadvertise) == ["objectIds": [.string(self.fixture.thermometer.objectID.rawValue)]])
        }
        // On shutdown: the remaining sensor, before the identity leaves.
        let sensors = try await next(&messages) { $0 == "\(prefix)DAD/\(owner)" }
        #expect(try json(sensors) == ["objectIds": [.string(self.fixture.hygrometer.objectID.rawValue)]])
        let identity = try await next(&messages) { $0 == "\(prefix)DAD/\(owner)" }
        #expect(try json(identity) == ["objectIds": [.string(owner.rawValue)]])
    }

    /// With the options off, nothing is advertised, deadvertised or answered.
    @Test func optionsTurnAdvertisingAndAnsweringOff() async throws {
        let bus = InProcessBus()
        var messages = bus.messages().makeAsyncIterator()
        let sources = SensorSourceController(
            sensors: [.init(self.fixture.thermometer, io: InMemorySensorIO())],
            options: .init(
                advertisesSensors: false,
                deadvertisesSensors: false,
                answersDiscovers: false,
                answersQueries: false
            )
        )
        try await self.fixture.withSource(bus: bus, [sources]) { _ in
            try await withOnlineManagers(count: 1, bus: bus) { managers, _ in
                let discover = try DiscoverEvent.byObjectID(self.fixture.thermometer.objectID)
                _ = try await managers[0].discover(discover)
                let query = try QueryEvent.byObjectTypes([Sensor.objectType])
                _ = try await managers[0].query(query)
                // The owner's Thing resolves after both requests, so their answers would have come first.
                let thing = try await managers[0].discover(try DiscoverEvent.byObjectID(self.fixture.room.objectID))
                _ = try await thing.first(timeout: .seconds(5))
            }
            #expect(try sources.unregister(self.fixture.thermometer.objectID) == true)
        }
        // Up to the owner's unjoin: no sensor Advertise, no Deadvertise, only the Thing's Resolve.
        let owner = self.fixture.owner.objectID
        var topics: [String] = []
        while let message = await messages.next() {
            topics.append(message.topic)
            if message.topic == "coaty/3/-/DAD/\(owner)" { break }
        }
        #expect(!topics.contains { $0.contains("ADV::coaty.sensorThings.Sensor") })
        #expect(topics.filter { $0.contains("/RSV/\(owner)/") || $0.contains("/RTV/\(owner)/") }.count == 1)
        #expect(topics.filter { $0 == "coaty/3/-/DAD/\(owner)" }.count == 1)
    }

    /// Discovers by the sensor's id and by object type `coaty.sensorThings.Sensor` are resolved, one
    /// Resolve per sensor; a Query for that object type gets the sensors matching the filter's
    /// conditions. Requests coaty-js ignores (core type, other types, no match) get no answer.
    @Test func discoversAndQueriesAreAnsweredAsInCoatyJS() async throws {
        let bus = InProcessBus()
        var messages = bus.messages().makeAsyncIterator()
        let sources = SensorSourceController(sensors: [
            .init(self.fixture.thermometer, io: InMemorySensorIO()),
            .init(self.fixture.hygrometer, io: InMemorySensorIO()),
        ])
        let both = [self.fixture.thermometer, self.fixture.hygrometer].map(\.objectID)
        try await self.fixture.withSource(bus: bus, [sources]) { _ in
            try await withOnlineManagers(count: 1, bus: bus) { managers, _ in
                let requester = managers[0]
                var ignored: [ObjectID] = []
                var streams: [Any] = []
                for discover in [
                    try DiscoverEvent.byCoreTypes([.coatyObject]),
                    try DiscoverEvent.byObjectTypes(["com.example.Sensor"]),
                    try DiscoverEvent.byExternalAndObjectID(externalID: "x", objectID: both[0]),
                    try DiscoverEvent.byObjectID(.random()),
                ] {
                    ignored.append(.random())
                    streams.append(try await requester.discover(discover, correlationID: ignored.last!))
                }
                let noMatch = ObjectFilter(conditions: .single(.init("name", .equals("Barometer"))))
                for query in [
                    try QueryEvent.byCoreTypes([.coatyObject]),
                    try QueryEvent.byObjectTypes([Sensor.objectType], filter: noMatch),
                ] {
                    ignored.append(.random())
                    streams.append(try await requester.query(query, correlationID: ignored.last!))
                }

                let byID = try await requester.discover(try DiscoverEvent.byObjectID(both[1]))
                #expect(try await byID.first(timeout: .seconds(5)).object?.objectID == both[1])

                var byType = try await requester.discover(try DiscoverEvent.byObjectTypes([Sensor.objectType]))
                    .makeAsyncIterator()
                let first = try #require(await byType.next()?.object as? Sensor)
                let second = try #require(await byType.next()?.object as? Sensor)
                #expect([first, second].map(\.objectID) == both)

                let ofRoom = ObjectFilter(
                    conditions: .single(.init("parentObjectId", .equals(.string(self.fixture.room.objectID.rawValue)))),
                    orderBy: [("name", .ascending)],
                    take: 1
                )
                let last = ObjectID.random()
                let retrieve = try await requester.query(
                    try QueryEvent.byObjectTypes([Sensor.objectType], filter: ofRoom),
                    correlationID: last
                ).first(timeout: .seconds(5))
                // Conditions only, in registration order: coaty-js's ObjectMatcher ignores ordering and paging.
                #expect(retrieve.objects.map(\.objectID) == both)

                // The ignored requests went out first and are answered in order: none was answered.
                var responses: [String] = []
                while true {
                    let message = try await next(&messages) { $0.contains("/RSV/") || $0.contains("/RTV/") }
                    responses.append(message.topic)
                    if message.topic.hasSuffix("/\(last)") { break }
                }
                #expect(responses.count == 4)
                #expect(!responses.contains { topic in ignored.contains { topic.hasSuffix("/\($0)") } })
                withExtendedLifetime(streams) {}
            }
        }
    }

    /// An observation goes out on `CHN:<sensor id>` with the object coaty-js's `createObservation`
    /// builds, or advertised; the value comes from the sensor's IO and also reaches `values(of:)`.
    @Test func observationsHaveCoatyJSsShapeAndChannel() async throws {
        let bus = InProcessBus()
        var messages = bus.messages().makeAsyncIterator()
        let io = InMemorySensorIO(value: 21.5)
        let sources = SensorSourceController(sensors: [.init(self.fixture.thermometer, io: io)])
        let owner = self.fixture.owner.objectID
        let sensorID = self.fixture.thermometer.objectID
        try await self.fixture.withSource(bus: bus, [sources]) { _ in
            var values = try sources.values(of: sensorID).makeAsyncIterator()
            let before = Date().timeIntervalSince1970 * 1000
            let observation = try await sources.publishObservation(of: sensorID)
            let after = Date().timeIntervalSince1970 * 1000
            #expect(await values.next() == 21.5)

            let channel = try await next(&messages) { $0.contains("/CHN:") }
            #expect(channel.topic == "coaty/3/-/CHN:\(sensorID)/\(owner)")
            let object = try #require(try json(channel)["object"])
            #expect(try json(channel) == ["object": object])
            #expect(object["objectId"] == .string(observation.objectID.rawValue))
            let time = try #require(object["phenomenonTime"]?.doubleValue)
            #expect(time == time.rounded(.down) && time >= before.rounded(.down) && time <= after)
            #expect(
                object
                    == [
                        "name": "Observation of Thermometer",
                        "objectId": .string(observation.objectID.rawValue),
                        "parentObjectId": .string(sensorID.rawValue),
                        "coreType": "CoatyObject",
                        "objectType": "coaty.sensorThings.Observation",
                        "phenomenonTime": object["phenomenonTime"]!,
                        "result": 21.5,
                        "resultTime": object["phenomenonTime"]!,
                    ]
            )

            io.write(["ok": true])
            let advertised = try await sources.publishObservation(
                of: sensorID,
                as: .advertise,
                resultQuality: ["good"],
                validTime: .init(start: 1, end: 2),
                parameters: ["p": 1],
                featureOfInterestID: "f1"
            )
            #expect(await values.next() == ["ok": true])
            for event in ["ADV:CoatyObject", "ADV::coaty.sensorThings.Observation"] {
                let message = try await next(&messages) { $0 == "coaty/3/-/\(event)/\(owner)" }
                let object = try #require(try json(message)["object"])
                #expect(object["objectId"] == .string(advertised.objectID.rawValue))
                #expect(object["result"] == ["ok": true])
                #expect(object["resultQuality"] == ["good"])
                #expect(object["validTime"] == ["start": 1, "end": 2])
                #expect(object["parameters"] == ["p": 1])
                #expect(object["featureOfInterestId"] == "f1")
            }

            // The value stream ends with the registration; observations of unknown sensors are refused.
            try sources.unregister(sensorID)
            #expect(await values.next() == nil)
            await #expect(throws: CommunicationError.self) { try await sources.publishObservation(of: sensorID) }
            #expect(throws: CommunicationError.self) { try sources.values(of: sensorID) }
        }
    }

    /// A sampled sensor publishes on its own every interval, reading its IO each time, until it is
    /// unregistered; a non-positive interval is refused, as is registering outside a running container.
    @Test func sampledSensorsPublishEveryInterval() async throws {
        let bus = InProcessBus()
        let io = InMemorySensorIO(value: 1)
        let sensorID = self.fixture.thermometer.objectID
        let sources = SensorSourceController()
        #expect { try sources.register(self.fixture.thermometer, io: io) } throws: {
            ($0 as? CommunicationError)?.code == .notRunning
        }
        try await self.fixture.withSource(bus: bus, [sources]) { _ in
            #expect {
                try sources.register(self.fixture.thermometer, io: io, sampling: .channel(every: .zero))
            } throws: {
                ($0 as? CommunicationError)?.code == .invalidArgument
            }
            #expect(!sources.isRegistered(sensorID))
            try await withOnlineManagers(count: 1, bus: bus) { managers, _ in
                var channel = try await managers[0].observeChannel(sensorID.rawValue).makeAsyncIterator()
                try sources.register(self.fixture.thermometer, io: io, sampling: .channel(every: .milliseconds(20)))
                var values = try sources.values(of: sensorID).makeAsyncIterator()
                // A value written is read by a later observation.
                for expected in 2...4 {
                    io.write(.int(expected))
                    while true {
                        let observation = try #require(await channel.next()?.object as? SensorObservation)
                        #expect(observation.parentObjectID == sensorID)
                        if observation.result == .int(expected) { break }
                    }
                }
                // The readings also reach the values stream.
                #expect(await values.next() != nil)
                try sources.unregister(sensorID)
                // The values stream ends (after what it still holds).
                while await values.next() != nil {}
            }
        }
    }
}
