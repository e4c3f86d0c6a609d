import CoatyCommunication
import CoatyControllers
import CoatyCore
import CoatyModel
import CoatyTesting
import Synchronization
import Testing

/// `IOSourceController` and `IOActorController` in agents whose IO points an `IORouter` associates, all
/// on one in-process bus: values flow from source to actor, at the pace the source's strategy sets.
@Suite(.timeLimit(.minutes(1)))
struct IOPointControllerTests {
    static let valueType = "com.example.Counter"

    /// Runs a router, an agent with `source` and an agent with `actor`, and hands the controllers to
    /// `body` once the actor's value stream is observed.
    func withRoutedAgents(
        source: IOSource,
        actor: IOActor,
        _ body: (IOSourceController, EventStream<IOValueEvent>) async throws -> Void
    ) async throws {
        let bus = InProcessBus()
        func configuration(_ name: String, _ nodes: [IONode] = []) -> Container.Configuration {
            Container.Configuration(
                transport: InProcessTransport(bus: bus),
                communication: .init(identity: Identity(name: name), ioNodes: nodes)
            )
        }
        let sources = IOSourceController()
        let actors = IOActorController()
        let router = IORouter(context: IOContext(name: "Lab"))
        try await Container.withRunning(
            configuration: configuration("Actor", [IONode(name: "Lab", ioActors: [actor])]),
            controllers: [actors]
        ) { _ in
            let values = try actors.observeIOValues(for: actor)
            try await Container.withRunning(
                configuration: configuration("Source", [IONode(name: "Lab", ioSources: [source])]),
                controllers: [sources]
            ) { _ in
                // Not associated yet: this value goes nowhere.
                #expect(!sources.isAssociated(source))
                try sources.publish(.string("before"), from: source)
                try await Container.withRunning(configuration: configuration("Router"), controllers: [router]) { _ in
                    try await body(sources, values)
                }
            }
        }
    }

    /// Publishes probes (-1) until the actor receives one, so that the route is observed at both ends,
    /// then 0..<count; returns the values the actor receives up to the last one (probes left out).
    /// A value that is not an integer (the one published before the association) is recorded as nil.
    func publishAndCollect(
        _ sources: IOSourceController,
        _ source: IOSource,
        _ values: EventStream<IOValueEvent>,
        count: Int
    ) async throws -> [Int?] {
        let probed = ProbeFlag()
        return try await withThrowingTaskGroup { group in
            group.addTask {
                var received: [Int?] = []
                for await event in values {
                    let value = event.value?.intValue
                    if value == -1 {
                        probed.value.store(true, ordering: .releasing)
                        continue
                    }
                    received.append(value)
                    if value == count - 1 { break }
                }
                return received
            }
            // IO values are fire-and-forget: those sent before the actor observes the route are lost,
            // by design. So probe again after a pause longer than any interval used here (a throttled
            // source sends nothing while values keep coming).
            while !probed.value.load(ordering: .acquiring) {
                try sources.publish(.int(-1), from: source)
                try await Task.sleep(for: .milliseconds(100))
            }
            for index in 0..<count { try sources.publish(.int(index), from: source) }
            return try await group.next() ?? []
        }
    }

    @Test func everyValueFlowsWithoutARate() async throws {
        let source = IOSource(name: "Counter", valueType: Self.valueType, updateStrategy: IOSourceUpdateStrategy.none)
        let actor = IOActor(name: "Display", valueType: Self.valueType)
        try await self.withRoutedAgents(source: source, actor: actor) { sources, values in
            let received = try await self.publishAndCollect(sources, source, values, count: 200)
            #expect(received == Array(0..<200))
            #expect(sources.isAssociated(source))
        }
    }

    /// Sampling: at most one value per update rate, the latest; the last value always arrives.
    @Test(arguments: [IOSourceUpdateStrategy.sample, .default, .throttle])
    func aRateThinsTheValuesOutAndTheLastArrives(strategy: IOSourceUpdateStrategy) async throws {
        let source = IOSource(name: "Counter", valueType: Self.valueType, updateRate: 40, updateStrategy: strategy)
        let actor = IOActor(name: "Display", valueType: Self.valueType)
        try await self.withRoutedAgents(source: source, actor: actor) { sources, values in
            let received = try await self.publishAndCollect(sources, source, values, count: 300)
            // 300 values published in a burst: one per interval at most gets through.
            #expect(received.last == 299)
            #expect(received.count < 100, "\(received.count) values got through")
            #expect(received.allSatisfy { $0 != nil })
            #expect(zip(received, received.dropFirst()).allSatisfy { ($0 ?? 0) < ($1 ?? 0) })
        }
    }

    /// The actor's values are asked for only after the router associated it: the association made
    /// before is known, so values flow, rather than only Associates that come after the call.
    @Test func valuesAskedForAfterTheAssociationStillFlow() async throws {
        let bus = InProcessBus()
        func configuration(_ name: String, _ nodes: [IONode] = []) -> Container.Configuration {
            Container.Configuration(
                transport: InProcessTransport(bus: bus),
                communication: .init(identity: Identity(name: name), ioNodes: nodes)
            )
        }
        let source = IOSource(name: "Counter", valueType: Self.valueType, updateStrategy: IOSourceUpdateStrategy.none)
        let actor = IOActor(name: "Display", valueType: Self.valueType)
        let sources = IOSourceController()
        let actors = IOActorController()
        let router = IORouter(context: IOContext(name: "Lab"))
        try await withOnlineManagers(count: 1, bus: bus) { observers, _ in
            let associations = try await observers[0].observeAssociate(ioContextName: "Lab")
            try await Container.withRunning(configuration: configuration("Router"), controllers: [router]) { _ in
                try await Container.withRunning(
                    configuration: configuration("Source", [IONode(name: "Lab", ioSources: [source])]),
                    controllers: [sources]
                ) { _ in
                    try await Container.withRunning(
                        configuration: configuration("Actor", [IONode(name: "Lab", ioActors: [actor])]),
                        controllers: [actors]
                    ) { _ in
                        _ = await associations.first { $0.ioActorID == actor.objectID && $0.associatingRoute != nil }
                        let values = try actors.observeIOValues(for: actor)
                        // A bounded number of probes: an actor that gets nothing fails instead of hanging.
                        let received = ProbeFlag()
                        try await withThrowingTaskGroup { group in
                            group.addTask {
                                if await values.first(where: { _ in true })?.value == 7 {
                                    received.value.store(true, ordering: .releasing)
                                }
                            }
                            for _ in 0..<50 where !received.value.load(ordering: .acquiring) {
                                try sources.publish(.int(7), from: source)
                                try await Task.sleep(for: .milliseconds(100))
                            }
                            group.cancelAll()
                        }
                        let gotValue = received.value.load(ordering: .acquiring)
                        #expect(gotValue, "the actor got no value")
                    }
                }
            }
        }
    }

    /// The association states say when values flow: once the source and the actor report `true`, the
    /// first value arrives (no probing); an actor whose association ended gets nothing, even from the
    /// route it still shares with another actor of its agent, until it is associated again.
    @Test func associationStatesTellWhenValuesFlow() async throws {
        let bus = InProcessBus()
        func configuration(_ name: String, _ nodes: [IONode] = []) -> Container.Configuration {
            Container.Configuration(
                transport: InProcessTransport(bus: bus),
                communication: .init(identity: Identity(name: name), ioNodes: nodes)
            )
        }
        let source = IOSource(name: "Counter", valueType: Self.valueType, updateStrategy: IOSourceUpdateStrategy.none)
        let kept = IOActor(name: "Kept", valueType: Self.valueType)
        let dropped = IOActor(name: "Dropped", valueType: Self.valueType)
        let onlyKept = IORouter.Rule(name: "only Kept") { $0.actor.objectID == kept.objectID }
        let router = IORouter(context: IOContext(name: "Lab"))
        let sources = IOSourceController()
        let actors = IOActorController()
        let actorNode = IONode(name: "Lab", ioActors: [kept, dropped])
        try await Container.withRunning(configuration: configuration("Actors", [actorNode]), controllers: [actors]) {
            _ in
            try await Container.withRunning(
                configuration: configuration("Source", [IONode(name: "Lab", ioSources: [source])]),
                controllers: [sources]
            ) { _ in
                var sourceStates = try sources.observeAssociation(for: source).makeAsyncIterator()
                var keptStates = try actors.observeAssociation(for: kept).makeAsyncIterator()
                var droppedStates = try actors.observeAssociation(for: dropped).makeAsyncIterator()
                var keptValues = try actors.observeIOValues(for: kept).makeAsyncIterator()
                var droppedValues = try actors.observeIOValues(for: dropped).makeAsyncIterator()
                var states = [await sourceStates.next(), await keptStates.next(), await droppedStates.next()]
                #expect(states == [false, false, false])

                try await Container.withRunning(configuration: configuration("Router"), controllers: [router]) { _ in
                    states = [await sourceStates.next(), await keptStates.next(), await droppedStates.next()]
                    #expect(states == [true, true, true])
                    try sources.publish(.int(1), from: source)
                    var values = [
                        await keptValues.next()?.value?.intValue, await droppedValues.next()?.value?.intValue,
                    ]
                    #expect(values == [1, 1])

                    router.defineRules([onlyKept])
                    let droppedState = await droppedStates.next()
                    #expect(droppedState == false)
                    #expect(!actors.isAssociated(dropped) && actors.isAssociated(kept) && sources.isAssociated(source))
                    try sources.publish(.int(2), from: source)
                    values = [await keptValues.next()?.value?.intValue]
                    #expect(values == [2])

                    router.defineRules([.anyCompatible])
                    let droppedAgain = await droppedStates.next()
                    #expect(droppedAgain == true)
                    try sources.publish(.int(3), from: source)
                    // 2 reached the agent on the route Dropped was no longer associated on: not handed on.
                    values = [await keptValues.next()?.value?.intValue, await droppedValues.next()?.value?.intValue]
                    #expect(values == [3, 3])
                }
                // The router stopped and ended every association.
                states = [await sourceStates.next(), await keptStates.next(), await droppedStates.next()]
                #expect(states == [false, false, false])
            }
        }
    }
}

/// Set once the actor has received a probe.
final class ProbeFlag: Sendable {
    let value = Atomic(false)
}
