import CoatyCommunication
import CoatyCore
import CoatyModel
import CoatyTesting
import Testing

@Suite(.timeLimit(.minutes(1)))
struct InboundValidationTests {
    static let source = "11111111-1111-4111-8111-111111111111"

    /// Invalid inbound events (protocol §2.3 verified rejections): dropped and reported, never delivered.
    @Test(arguments: [
        (
            "ADV:CoatyObject",
            #"{"object":{"objectId":"o1","coreType":"CoatyObject","objectType":"x","name":"n","externalId":null}}"#
        ),
        (
            "ADV:CoatyObject",
            #"{"object":{"objectId":"o1","coreType":"CoatyObject","objectType":"x","name":"n"},"privateData":[1]}"#
        ),
        (
            "ADV:CoatyObject",
            #"{"object":{"objectId":"o1","coreType":"CoatyObject","objectType":"x","name":"n"},"privateData":null}"#
        ),
        ("ADV:CoatyObject", #"{"object":{"objectId":"o1","coreType":"CoatyObject","objectType":"x"}}"#),
        ("ADV:CoatyObject", #"{"object":{"objectId":"o1","coreType":"Foo","objectType":"x","name":"n"}}"#),
        (
            "ADV:CoatyObject",
            #"{"object":{"objectId":"o1","coreType":"CoatyObject","objectType":"com.x/T","name":"n"}}"#
        ),
        ("ADV:CoatyObject", #"not json"#),
        (
            "ADV:Task",
            #"{"object":{"objectId":"o1","coreType":"Task","objectType":"coaty.Task","name":"n","creatorId":"c","creationTimestamp":1}}"#
        ),
    ])
    func invalidAdvertiseIsDroppedAndReported(event: String, payload: String) async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let coreType = try #require(CoreType(rawValue: String(event.dropFirst(4))))
            let advertises = await managers[0].observeAdvertise(coreType: coreType)
            let diagnostics = managers[0].observeDiagnostics()
            let topic = "coaty/3/-/\(event)/\(Self.source)"
            let valid = #"{"object":{"objectId":"ok","coreType":"CoatyObject","objectType":"x","name":"ok"}}"#
            try await publishRaw(on: bus, [(topic, payload), ("coaty/3/-/ADV:CoatyObject/\(Self.source)", valid)])
            let diagnostic = try #require(await diagnostics.first { _ in true })
            #expect(diagnostic.kind == .invalidInboundEvent)
            #expect(diagnostic.topic == topic)
            if coreType == .coatyObject {
                // The next, valid event is delivered: the invalid one was dropped, nothing else.
                #expect(try await advertises.first(timeout: .seconds(5)).object.name == "ok")
            }
        }
    }

    @Test(arguments: [
        ("DAD", #"{"objectIds":[""]}"#),
        ("DAD", #"{"objectIds":"x"}"#),
        ("CHN:c", #"{"object":{"objectId":"o","coreType":"CoatyObject","objectType":"x","name":"n"},"objects":[]}"#),
        ("CHN:c", #"{}"#),
    ])
    func invalidOneWayEventsAreReported(event: String, payload: String) async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let deadvertises = await managers[0].observeDeadvertise()
            let channel = try await managers[0].observeChannel("c")
            let diagnostics = managers[0].observeDiagnostics()
            let topic = "coaty/3/-/\(event)/\(Self.source)"
            try await publishRaw(on: bus, [(topic, payload)])
            let diagnostic = try #require(await diagnostics.first { _ in true })
            #expect(diagnostic.topic == topic)
            _ = (deadvertises, channel)
        }
    }

    @Test(arguments: [#"{}"#, #"{"result":1,"error":{"code":1,"message":"m"}}"#, #"{"error":{"code":1}}"#])
    func invalidReturnIsReported(payload: String) async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let correlationID = ObjectID.random()
            let returns = try await managers[0].call(CallEvent(operation: "op"), correlationID: correlationID)
            let diagnostics = managers[0].observeDiagnostics()
            let topic = "coaty/3/-/RTN/\(Self.source)/\(correlationID)"
            try await publishRaw(on: bus, [(topic, payload), (topic, #"{"result":null}"#)])
            #expect(try #require(await diagnostics.first { _ in true }).topic == topic)
            #expect(try await returns.first(timeout: .seconds(5)).result == .null)
        }
    }

    /// coaty-js reads only `object` from an Update (`UpdateEventData.createFrom`), so a `privateData`
    /// there, even `null` or an array, does not make the Update invalid.
    @Test(arguments: [#","privateData":null"#, #","privateData":[1]"#, #","privateData":{"k":1}"#])
    func updatePrivateDataIsIgnoredLikeCoatyJS(extra: String) async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let updates = await managers[0].observeUpdate(coreType: .coatyObject)
            let payload =
                #"{"object":{"objectId":"o1","coreType":"CoatyObject","objectType":"x","name":"n"}"# + extra + "}"
            try await publishRaw(on: bus, [("coaty/3/-/UPD:CoatyObject/\(Self.source)/\(ObjectID.random())", payload)])
            #expect(try await updates.first(timeout: .seconds(5)).object.name == "n")
        }
    }

    /// A topic level with more than 30 combining marks in a row would take quadratic time to hash or
    /// compare once it is a string (a 64 KB source id took a quarter of a second): such a topic is a
    /// malformed Coaty topic, reported and dropped. 30 in a row are accepted.
    @Test func topicLevelsWithLongRunsOfCombiningMarksAreReported() async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let advertises = await managers[0].observeAdvertise(coreType: .coatyObject)
            let diagnostics = managers[0].observeDiagnostics()
            let marks = { (count: Int) in String(repeating: "\u{301}\u{316}", count: count / 2) }
            let valid = #"{"object":{"objectId":"o1","coreType":"CoatyObject","objectType":"x","name":"n"}}"#
            let rejected = "coaty/3/-/ADV:CoatyObject/s" + marks(32_000)
            let accepted = "coaty/3/-/ADV:CoatyObject/s" + marks(30)
            try await publishRaw(on: bus, [(rejected, valid), (accepted, valid)])
            let diagnostic = try #require(await diagnostics.first { _ in true })
            #expect(diagnostic.kind == .invalidInboundEvent)
            #expect(diagnostic.topic == rejected)
            let event = try await advertises.first(timeout: .seconds(5))
            #expect(event.origin?.sourceID == ObjectID("s" + marks(30)))
        }
    }

    @Test func extraLevelsAndNonUUIDSourcesAreAcceptedLikeCoatyJS() async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let advertises = await managers[0].observeAdvertise(coreType: .coatyObject)
            let valid =
                #"{"object":{"objectId":"o1","coreType":"CoatyObject","objectType":"x","name":"n","extra":{"k":[1]}},"unknown":true}"#
            try await publishRaw(on: bus, [("coaty/3/-/ADV:CoatyObject/not-a-uuid", valid)])
            let event = try await advertises.first(timeout: .seconds(5))
            #expect(event.origin?.sourceID == "not-a-uuid")
            #expect(event.object.customProperties["extra"] == ["k": [1]])
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct RawTests {
    @Test func rawEventsTravelVerbatimWithWildcards() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let raw = try await managers[1].observeRaw("golden/raw/+")
            try await managers[0].publish(try RawEvent(topic: "golden/raw/1", payload: [0xCA, 0xFE]))
            let received = try await raw.first(timeout: .seconds(5))
            #expect(received.topic == "golden/raw/1")
            #expect(received.payload == [0xCA, 0xFE])
        }
    }

    @Test func rawObserversNeverSeeCoatyTopics() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let everything = try await managers[1].observeRaw("#")
            try await managers[0].publish(ChannelEvent(channelID: "c", objects: []))
            try await managers[0].publish(try RawEvent(topic: "after", string: "x"))
            #expect(try await everything.first(timeout: .seconds(5)).topic == "after")
        }
    }

    @Test(arguments: ["coaty/foo/bar/baz", "a/+", "a/#", ""])
    func invalidRawTopicsAreRejected(topic: String) {
        #expect { try RawEvent(topic: topic, payload: []) } throws: {
            ($0 as? CommunicationError)?.code == .invalidTopic
        }
    }

    @Test(arguments: ["coaty/#", "a/#/b", "a+"])
    func invalidRawFiltersAreRejected(filter: String) async {
        let manager = CommunicationManager(transport: InProcessTransport(bus: InProcessBus()), configuration: .init())
        await #expect { _ = try await manager.observeRaw(filter) } throws: {
            ($0 as? CommunicationError)?.code == .invalidTopic
        }
    }

    @Test func retainedRawMessagesReachLateSubscribers() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let early = try await managers[0].observeRaw("golden/raw/retained")
            try await managers[0].publish(
                try RawEvent(topic: "golden/raw/retained", string: "retained-text", retain: true)
            )
            _ = try await early.first(timeout: .seconds(5))
            let late = try await managers[1].observeRaw("golden/raw/retained")
            #expect(try await late.first(timeout: .seconds(5)).string == "retained-text")
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct IOTests {
    static let source: ObjectID = "66666666-6666-4666-8666-666666666666"
    static let actor: ObjectID = "77777777-7777-4777-8777-777777777777"

    @Test func associateDrivesIOStateAndValuesFlowOnTheRoute() async throws {
        try await withOnlineManagers(count: 3, configure: { _, configuration in configuration.namespace = "golden" }) {
            managers,
            _ in
            let (router, sourceAgent, actorAgent) = (managers[0], managers[1], managers[2])
            let route = IOValueEvent.route(namespace: "golden", ioSourceID: Self.source)
            #expect(route == "coaty/3/golden/IOV/\(Self.source)")
            let sourceStates = try await sourceAgent.observeIOState(
                ioContextName: "GoldenIoContext",
                ioPointID: Self.source
            )
            var states = sourceStates.makeAsyncIterator()
            #expect(await states.next() == IOStateEvent(hasAssociations: false))
            let values = try await actorAgent.observeIOValue(route: route)
            try await router.publish(
                AssociateEvent(
                    ioContextName: "GoldenIoContext",
                    ioSourceID: Self.source,
                    ioActorID: Self.actor,
                    associatingRoute: route,
                    updateRate: 100
                )
            )
            #expect(await states.next() == IOStateEvent(hasAssociations: true, updateRate: 100))
            try await sourceAgent.publish(try IOValueEvent(route: route, value: ["value": 22.5, "unit": "Cel"]))
            let value = try await values.first(timeout: .seconds(5))
            #expect(value.value == ["value": 22.5, "unit": "Cel"])
            #expect(value.origin?.sourceID == Self.source)
            try await router.publish(
                AssociateEvent(ioContextName: "GoldenIoContext", ioSourceID: Self.source, ioActorID: Self.actor)
            )
            #expect(await states.next() == IOStateEvent(hasAssociations: false))
        }
    }

    /// coaty-js accepts an Associate whose route is any non-empty string (`AssociateEventData`), and its
    /// IO state then counts the association; only subscribing or publishing on such a route fails.
    @Test func associateWithAnUnusableRouteIsStillAnAssociation() async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let associations = try await managers[0].observeAssociate(ioContextName: "ctx")
            let states = try await managers[0].observeIOState(ioContextName: "ctx", ioPointID: Self.source)
            var iterator = states.makeAsyncIterator()
            #expect(await iterator.next() == IOStateEvent(hasAssociations: false))
            let payload = #"{"ioSourceId":"\#(Self.source)","ioActorId":"\#(Self.actor)","associatingRoute":"a/+"}"#
            try await publishRaw(on: bus, [("coaty/3/-/ASC:ctx/\(InboundValidationTests.source)", payload)])
            #expect(try await associations.first(timeout: .seconds(5)).associatingRoute == "a/+")
            #expect(await iterator.next() == IOStateEvent(hasAssociations: true))
        }
    }

    /// coaty-js never gives an IO actor an update rate (`_handleAssociate`, `_observeIoState`): only
    /// the source's IO state carries the rate of its association.
    @Test func ioActorStatesCarryNoUpdateRate() async throws {
        try await withOnlineManagers(count: 1) { managers, _ in
            let actorStates = try await managers[0].observeIOState(ioContextName: "ctx", ioPointID: Self.actor)
            let sourceStates = try await managers[0].observeIOState(ioContextName: "ctx", ioPointID: Self.source)
            var actorIterator = actorStates.makeAsyncIterator()
            var sourceIterator = sourceStates.makeAsyncIterator()
            #expect(await actorIterator.next() == IOStateEvent(hasAssociations: false))
            #expect(await sourceIterator.next() == IOStateEvent(hasAssociations: false))
            try await managers[0].publish(
                AssociateEvent(
                    ioContextName: "ctx",
                    ioSourceID: Self.source,
                    ioActorID: Self.actor,
                    associatingRoute: "route/a",
                    updateRate: 250
                )
            )
            #expect(await sourceIterator.next() == IOStateEvent(hasAssociations: true, updateRate: 250))
            #expect(await actorIterator.next() == IOStateEvent(hasAssociations: true))
        }
    }

    @Test func rawIOValuesAndExternalRoutes() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let values = try await managers[1].observeIOValue(route: "external/golden/temp")
            try await managers[0].publish(try IOValueEvent(route: "external/golden/temp", bytes: [0x01, 0x02, 0xFF]))
            let received = try await values.first(timeout: .seconds(5))
            #expect(received.payload == [0x01, 0x02, 0xFF])
            #expect(received.value == nil)
        }
    }
}
