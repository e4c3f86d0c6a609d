import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Testing

@testable import CoatyCommunication

@Suite(.timeLimit(.minutes(1)))
struct AdvertiseTests {
    @Test func observerReceivesAdvertisedObjectByObjectType() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let (publisher, observer) = (managers[0], managers[1])
            let advertises = try await observer.observeAdvertise(objectType: "com.example.Thing")
            let thing = CoatyObject(objectType: "com.example.Thing", name: "Thing42", customProperties: ["floor": 7])
            try await publisher.publish(AdvertiseEvent(thing, privateData: ["reason": "golden"]))
            let received = try await advertises.first(timeout: .seconds(5))
            #expect(received.object.objectID == thing.objectID)
            #expect(received.object.customProperties["floor"] == 7)
            #expect(received.privateData?["reason"] == "golden")
            #expect(received.origin?.sourceID == publisher.identity.objectID)
        }
    }

    @Test func customObjectIsPublishedUnderCoreTypeAndObjectType() async throws {
        try await withOnlineManagers(count: 2) { managers, bus in
            let taps = bus.messages()
            let byCoreType = await managers[1].observeAdvertise(coreType: .coatyObject)
            let thing = CoatyObject(objectType: "com.example.Thing", name: "Thing42")
            try await managers[0].publish(AdvertiseEvent(thing))
            #expect(try await byCoreType.first(timeout: .seconds(5)).object.objectID == thing.objectID)
            var topics: [String] = []
            for await message in taps
            where message.topic.contains("/ADV:") && message.topic.hasSuffix(managers[0].identity.objectID.rawValue) {
                topics.append(message.topic)
                if topics.count == 2 { break }
            }
            let id = managers[0].identity.objectID.rawValue
            #expect(topics.contains("coaty/3/-/ADV:CoatyObject/\(id)"))
            #expect(topics.contains("coaty/3/-/ADV::com.example.Thing/\(id)"))
        }
    }

    @Test(arguments: ["com.x/T", "a+b", "a#", ""])
    func invalidObjectTypeIsRejectedAtTheCall(objectType: String) async throws {
        let object = CoatyObject(objectType: objectType, name: "x")
        #expect { try AdvertiseEvent(object) } throws: { ($0 as? CommunicationError)?.code == .invalidArgument }
        let manager = CommunicationManager(
            transport: InProcessTransport(bus: InProcessBus()),
            configuration: .init(identity: Identity(name: "A"))
        )
        await #expect { _ = try await manager.observeAdvertise(objectType: objectType) } throws: {
            ($0 as? CommunicationError)?.code == .invalidArgument
        }
    }

    @Test func agentsReceiveTheirOwnEvents() async throws {
        try await withOnlineManagers(count: 1) { managers, _ in
            let advertises = try await managers[0].observeAdvertise(objectType: "com.example.Echo")
            try await managers[0].publish(AdvertiseEvent(CoatyObject(objectType: "com.example.Echo", name: "echo")))
            #expect(try await advertises.first(timeout: .seconds(5)).object.name == "echo")
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct ChannelTests {
    @Test func channelDeliversOneObjectAndArrays() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let events = try await managers[1].observeChannel("golden-channel")
            var iterator = events.makeAsyncIterator()
            let thing = CoatyObject(objectType: "com.example.Thing", name: "Thing42")
            try await managers[0].publish(
                ChannelEvent(channelID: "golden-channel", object: thing, privateData: ["seq": 1])
            )
            try await managers[0].publish(ChannelEvent(channelID: "golden-channel", objects: [thing, thing]))
            let first = try #require(await iterator.next())
            #expect(first.object?.objectID == thing.objectID)
            #expect(first.channelID == "golden-channel")
            let second = try #require(await iterator.next())
            #expect(second.objects?.count == 2)
        }
    }

    @Test func otherChannelsAreNotDelivered() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let events = try await managers[1].observeChannel("wanted")
            let thing = CoatyObject(name: "T")
            try await managers[0].publish(ChannelEvent(channelID: "other", object: thing))
            try await managers[0].publish(ChannelEvent(channelID: "wanted", objects: []))
            let received = try await events.first(timeout: .seconds(5))
            #expect(received.objects?.isEmpty == true)
        }
    }

    /// A correlation id becomes the last level of the request topic and of the response filter: `#`
    /// would observe every response in the namespace, `/` would publish a topic no agent accepts.
    @Test(arguments: ["a/b", "a+", "#", ""])
    func invalidCorrelationIDIsRejectedAtTheCall(correlationID: String) async throws {
        let manager = CommunicationManager(
            transport: InProcessTransport(bus: InProcessBus()),
            configuration: .init(identity: Identity(name: "A"))
        )
        let id = ObjectID(correlationID)
        let isInvalidArgument: @Sendable (any Error) -> Bool = {
            ($0 as? CommunicationError)?.code == .invalidArgument
        }
        await #expect(
            performing: { _ = try await manager.call(CallEvent(operation: "op"), correlationID: id) },
            throws: isInvalidArgument
        )
        await #expect(
            performing: { _ = try await manager.discover(try .byObjectID("o"), correlationID: id) },
            throws: isInvalidArgument
        )
        await #expect(
            performing: { _ = try await manager.query(try .byObjectTypes(["x"]), correlationID: id) },
            throws: isInvalidArgument
        )
        let update = try UpdateEvent(thing())
        await #expect(
            performing: { _ = try await manager.update(update, correlationID: id) },
            throws: isInvalidArgument
        )
        await #expect(
            performing: { _ = try await manager.update(update, objectTypeCorrelationID: id) },
            throws: isInvalidArgument
        )
    }

    /// Every topic carries the namespace and the identity's id, so a manager that cannot publish them
    /// refuses to run instead of publishing topics no agent accepts (or a broker refuses).
    @Test(arguments: [("a/b", "ok"), ("", "ok"), ("ns", "x#y"), ("ns", "x/y"), ("ns", "")])
    func runRefusesANamespaceOrIdentityIDThatCannotBeATopicLevel(namespace: String, identityID: String) async {
        let manager = CommunicationManager(
            transport: InProcessTransport(bus: InProcessBus()),
            configuration: .init(identity: Identity(objectID: ObjectID(identityID), name: "A"), namespace: namespace)
        )
        await #expect { try await manager.run() } throws: { ($0 as? CommunicationError)?.code == .invalidArgument }
        #expect(manager.communicationState == .offline)
    }

    @Test(arguments: ["a/b", "a+", "#", ""])
    func invalidChannelIDIsRejected(channelID: String) {
        #expect { try ChannelEvent(channelID: channelID, objects: []) } throws: {
            ($0 as? CommunicationError)?.code == .invalidArgument
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct DeadvertiseTests {
    @Test func deadvertiseIsDelivered() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let events = await managers[1].observeDeadvertise()
            let id = ObjectID.random()
            try await managers[0].publish(DeadvertiseEvent(objectIDs: [id]))
            #expect(try await events.first(timeout: .seconds(5)).objectIDs == [id])
        }
    }

    @Test func abruptlyEndedAgentsLastWillIsDelivered() async throws {
        try await withOnlineManagers(count: 2) { managers, bus in
            let events = await managers[1].observeDeadvertise()
            #expect(bus.dropConnection(clientID: managers[0].clientID))
            let will = try await events.first(timeout: .seconds(5))
            #expect(will.objectIDs == [managers[0].identity.objectID])
            #expect(will.origin?.sourceID == managers[0].identity.objectID)
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct DiscoverResolveTests {
    @Test func discoverByObjectIDIsResolved() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let (requester, responder) = (managers[0], managers[1])
            let thing = CoatyObject(objectType: "com.example.Thing", name: "Thing42", externalID: "ext-42")
            let discovers = await responder.observeDiscover()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await discover in discovers where discover.objectID == thing.objectID {
                        try discover.resolve(ResolveEvent(object: thing, privateData: ["source": "B"]))
                    }
                }
                let resolve = try await requester.discover(.byObjectID(thing.objectID)).first(timeout: .seconds(5))
                #expect(resolve.object?.objectID == thing.objectID)
                #expect(resolve.origin?.sourceID == responder.identity.objectID)
                group.cancelAll()
            }
        }
    }

    @Test func identityIsResolvedAutomatically() async throws {
        try await withOnlineManagers(count: 3) { managers, _ in
            let resolves = try await managers[0].discover(.byObjectID(managers[2].identity.objectID))
            #expect(try await resolves.first(timeout: .seconds(5)).object?.objectID == managers[2].identity.objectID)
        }
    }

    @Test func mismatchingResolveIsDroppedAndReported() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let (requester, responder) = (managers[0], managers[1])
            let wanted = ObjectID.random()
            let discovers = await responder.observeDiscover()
            let collector = DiagnosticsCollector()
            try await collector.collect(from: requester) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await discover in discovers where discover.objectID == wanted {
                            // A responder-side check refuses a wrong object ...
                            #expect(throws: CommunicationError.self) {
                                try discover.resolve(ResolveEvent(object: CoatyObject(name: "wrong")))
                            }
                            // ... so answer with related objects only, which are never checked.
                            try discover.resolve(ResolveEvent(relatedObjects: [CoatyObject(name: "related")]))
                        }
                    }
                    let resolve = try await requester.discover(.byObjectID(wanted)).first(timeout: .seconds(5))
                    #expect(resolve.object == nil)
                    #expect(resolve.relatedObjects?.first?.name == "related")
                    group.cancelAll()
                }
            }
        }
    }

    @Test(arguments: [
        (#"{}"#, false),
        (#"{"objectId":"x","objectTypes":["t"]}"#, false),
        (#"{"objectTypes":["t"],"coreTypes":["Task"]}"#, false),
        (#"{"externalId":null}"#, false),
        (#"{"coreTypes":["Foo"]}"#, false),
        (#"{"coreTypes":["Task"]}"#, true),
        (#"{"coreTypes":[]}"#, true),
        (#"{"externalId":"ext","objectTypes":["t"],"coreTypes":["Task"]}"#, true),
        (#"{"externalId":"ext","objectId":"id"}"#, true),
        (#"{"objectId":"id"}"#, true),
    ])
    func inboundDiscoverValidation(payload: String, isValid: Bool) {
        let topic = "coaty/3/-/DSC/11111111-1111-4111-8111-111111111111/c1"
        let decoded = try? InboundEvent.decode(
            TransportMessage(topic: topic, payload: Array(payload.utf8)),
            topic: #require(CoatyTopic(parsing: topic)),
            family: ObjectFamily()
        )
        #expect((decoded != nil) == isValid)
    }
}
