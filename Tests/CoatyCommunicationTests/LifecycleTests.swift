import CoatyCommunication
import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Testing

@Suite(.timeLimit(.minutes(1)))
struct LifecycleTests {
    /// Waits on a bus tap for the first message whose topic satisfies `predicate`.
    func firstMessage(
        _ taps: AsyncStream<TransportMessage>,
        where predicate: (String) -> Bool
    ) async -> TransportMessage? {
        for await message in taps where predicate(message.topic) { return message }
        return nil
    }

    @Test func joinSubscribesOnceAndAdvertisesIdentityFirst() async throws {
        let bus = InProcessBus()
        let taps = bus.messages()
        let node = IONode(name: "GoldenIoContext")
        let manager = CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(identity: Identity(name: "AgentA"), ioNodes: [node], namespace: "golden")
        )
        // Queued before run(): must come after the join events.
        try await manager.publish(ChannelEvent(channelID: "queued", objects: []))
        let states = manager.observeCommunicationState()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await manager.run() }
            _ = await states.first { $0 == .online }
            var topics: [String] = []
            for await message in taps {
                topics.append(message.topic)
                if topics.count == 3 { break }
            }
            let id = manager.identity.objectID
            #expect(
                topics == [
                    "coaty/3/golden/ADV:Identity/\(id)", "coaty/3/golden/ADV:IoNode/\(id)",
                    "coaty/3/golden/CHN:queued/\(id)",
                ]
            )
            manager.finish()
            try await group.waitForAll()
        }
        #expect(manager.clientID.count == 23)
        #expect(manager.clientID.hasPrefix("Coaty"))
    }

    @Test func gracefulStopPublishesDeadvertiseOnceAndNoWill() async throws {
        let bus = InProcessBus()
        let observer = CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(identity: Identity(name: "Observer"))
        )
        let leaving = CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(identity: Identity(name: "Leaving"))
        )
        let taps = bus.messages()
        try await withThrowingTaskGroup(of: Void.self) { group in
            let observerStates = observer.observeCommunicationState()
            group.addTask { try await observer.run() }
            _ = await observerStates.first { $0 == .online }
            let deadvertises = await observer.observeDeadvertise()
            let leavingStates = leaving.observeCommunicationState()
            let leavingRun = Task { try await leaving.run() }
            _ = await leavingStates.first { $0 == .online }
            leaving.finish()
            try await leavingRun.value
            #expect(try await deadvertises.first(timeout: .seconds(5)).objectIDs == [leaving.identity.objectID])
            // Publish a marker and check that only one DAD of the leaving agent preceded it.
            try await observer.publish(ChannelEvent(channelID: "marker", objects: []))
            var deadvertiseCount = 0
            for await message in taps {
                if message.topic == "coaty/3/-/DAD/\(leaving.identity.objectID)" { deadvertiseCount += 1 }
                if message.topic.contains("CHN:marker") { break }
            }
            #expect(deadvertiseCount == 1)
            #expect(!bus.clientIDs.contains(leaving.clientID))
            observer.finish()
            try await group.waitForAll()
        }
    }

    @Test func cancellingRunStopsAndFinishesStreams() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let deadvertises = await managers[1].observeDeadvertise()
            let bus = InProcessBus()
            let extra = CommunicationManager(
                transport: InProcessTransport(bus: bus),
                configuration: .init(identity: Identity(name: "X"))
            )
            let states = extra.observeCommunicationState()
            let stream = await extra.observeDeadvertise()
            let run = Task { try await extra.run() }
            _ = await states.first { $0 == .online }
            run.cancel()
            try await run.value
            // The observation finished when run() returned.
            for await _ in stream {}
            #expect(extra.communicationState == .offline)
            _ = deadvertises
        }
    }

    @Test func reconnectReadvertisesIdentityAndResubscribes() async throws {
        try await withOnlineManagers(count: 2) { managers, bus in
            let (flaky, observer) = (managers[0], managers[1])
            let identities = await observer.observeAdvertise(coreType: .identity)
            let channel = try await flaky.observeChannel("after")
            let states = flaky.observeCommunicationState()
            var stateIterator = states.makeAsyncIterator()
            #expect(await stateIterator.next() == .online)
            #expect(bus.dropConnection(clientID: flaky.clientID))
            #expect(await stateIterator.next() == .offline)
            #expect(await stateIterator.next() == .online)
            let readvertised = try await identities.first(timeout: .seconds(5))
            #expect(readvertised.object.objectID == flaky.identity.objectID)
            // The channel observation was re-subscribed on reconnect.
            try await observer.publish(ChannelEvent(channelID: "after", objects: []))
            #expect(try await channel.first(timeout: .seconds(5)).channelID == "after")
        }
    }

    @Test func publicationsWhileOfflineAreQueuedInOrderAndOldestDropped() async throws {
        let bus = InProcessBus()
        let taps = bus.messages()
        let manager = CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(identity: Identity(name: "Q"), outboxCapacity: 3)
        )
        let diagnostics = manager.observeDiagnostics()
        for index in 0..<5 { try await manager.publish(ChannelEvent(channelID: "c\(index)", objects: [])) }
        let dropped = await diagnostics.prefix(2).reduce(into: []) { $0.append($1) }
        #expect(dropped.map(\.kind) == [.droppedPublication, .droppedPublication])
        #expect(dropped.map(\.topic).allSatisfy { $0.contains("CHN:c0") || $0.contains("CHN:c1") })
        let states = manager.observeCommunicationState()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await manager.run() }
            _ = await states.first { $0 == .online }
            var channels: [String] = []
            for await message in taps where message.topic.contains("/CHN:") {
                channels.append(String(message.topic.split(separator: "/")[3]))
                if channels.count == 3 { break }
            }
            #expect(channels == ["CHN:c2", "CHN:c3", "CHN:c4"])
            manager.finish()
            try await group.waitForAll()
        }
    }

    /// A request made before its manager runs keeps its response subscription for the connect, which
    /// subscribes it before the queued request goes out, so the answer is not missed.
    @Test func aRequestMadeWhileOfflineIsAnsweredOnceOnline() async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let callee = managers[0]
            let registration = try await callee.handleCalls("com.example.echo") { call in
                try call.returnResult(call.parameter(named: "text") ?? nil)
            }
            defer { registration.cancel() }
            let caller = CommunicationManager(
                transport: InProcessTransport(bus: bus),
                configuration: .init(identity: Identity(name: "late caller"))
            )
            let returns = try await caller.call(
                CallEvent(operation: "com.example.echo", parameters: ["text": "queued"])
            )
            #expect(caller.communicationState == .offline)
            let states = caller.observeCommunicationState()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await caller.run() }
                _ = await states.first { $0 == .online }
                #expect(try await returns.first(timeout: .seconds(5)).result == "queued")
                caller.finish()
                try await group.waitForAll()
            }
        }
    }

    @Test func runTwiceConcurrentlyIsAnError() async throws {
        try await withOnlineManagers(count: 1) { managers, _ in
            await #expect { try await managers[0].run() } throws: {
                ($0 as? CommunicationError)?.code == .alreadyRunning
            }
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct NamespaceTests {
    @Test func namespacesIsolateAndCrossNamespacingBridges() async throws {
        let bus = InProcessBus()
        try await withOnlineManagers(
            count: 3,
            bus: bus,
            configure: { index, configuration in
                configuration.namespace = index == 0 ? "a" : "b"
                configuration.isCrossNamespacingEnabled = index == 2
            }
        ) { managers, _ in
            let sameNamespace = try await managers[1].observeChannel("c")
            let crossNamespace = try await managers[2].observeChannel("c")
            try await managers[0].publish(ChannelEvent(channelID: "c", objects: []))
            try await managers[2].publish(ChannelEvent(channelID: "c", objects: [CoatyObject(name: "from b")]))
            // Two agents publish independently, so the cross-namespacing agent may get either first.
            var crossNamespaces: [String] = []
            for await event in crossNamespace {
                crossNamespaces.append(event.origin?.namespace ?? "?")
                if crossNamespaces.count == 2 { break }
            }
            #expect(crossNamespaces.sorted() == ["a", "b"])
            // managers[1] (namespace b) does not see the event in namespace a, only the one in b.
            let same = try await sameNamespace.first(timeout: .seconds(5))
            #expect(same.objects?.first?.name == "from b")
        }
    }
}
