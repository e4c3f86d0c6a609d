import CoatyCore
import CoatyModel
import CoatyTesting
import Testing

@testable import CoatyCommunication
@testable import CoatyControllers

/// An `IORouter` in a container, routing the IO nodes of other agents on one in-process bus.
@Suite(.timeLimit(.minutes(1)))
struct IORouterTests {
    static let valueType = "com.example.Temperature"

    func routerConfiguration(_ bus: InProcessBus) -> Container.Configuration {
        Container.Configuration(
            transport: InProcessTransport(bus: bus),
            communication: .init(identity: Identity(name: "Router"))
        )
    }

    /// A thermometer and a display, and a router of the "Kitchen" context that associates them only
    /// while its `cooking` property is `true`.
    struct Kitchen {
        let source = IOSource(name: "Thermometer", valueType: IORouterTests.valueType)
        let actor = IOActor(name: "Display", valueType: IORouterTests.valueType)
        let context: IOContext
        let router: IORouter

        init(cooking: Bool) {
            self.context = IOContext(name: "Kitchen", customProperties: ["cooking": .bool(cooking)])
            self.router = IORouter(
                context: self.context,
                rules: [.init(name: "only while cooking") { $0.context.customProperties["cooking"] == true }]
            )
        }

        /// Runs `body` while an agent with the thermometer and the display in its "Kitchen" node is
        /// online.
        func withNodeAgent(bus: InProcessBus, _ body: () async throws -> Void) async throws {
            try await withOnlineManagers(
                count: 1,
                bus: bus,
                configure: { [source, actor] _, configuration in
                    configuration.ioNodes = [IONode(name: "Kitchen", ioSources: [source], ioActors: [actor])]
                }
            ) { _, _ in try await body() }
        }
    }

    @Test func associatesDiscoveredNodesAndValuesFlow() async throws {
        let bus = InProcessBus()
        let source = IOSource(name: "Thermometer", valueType: Self.valueType, updateRate: 250)
        let actor = IOActor(name: "Display", valueType: Self.valueType)
        // Rules defined before the router runs are the ones it starts with.
        let router = IORouter(context: IOContext(name: "Kitchen"), rules: [])
        router.defineRules([.anyCompatible])
        try await withOnlineManagers(
            count: 2,
            bus: bus,
            configure: { index, configuration in
                configuration.ioNodes = [
                    index == 0
                        ? IONode(name: "Kitchen", ioSources: [source]) : IONode(name: "Kitchen", ioActors: [actor])
                ]
            }
        ) { managers, _ in
            let associations = try await managers[1].observeAssociate(ioContextName: "Kitchen")
            let states = try await managers[0].observeIOState(ioContextName: "Kitchen", ioPointID: source.objectID)
            let contexts = await managers[1].observeAdvertise(coreType: .ioContext)
            try await Container.withRunning(configuration: self.routerConfiguration(bus), controllers: [router]) {
                container in
                // The agents were online before the router: it finds their nodes by its Discover.
                let associate = try #require(await associations.first { $0.associatingRoute != nil })
                #expect(associate.ioSourceID == source.objectID && associate.ioActorID == actor.objectID)
                #expect(associate.updateRate == 250)
                let route = try #require(associate.associatingRoute)
                #expect(route == IOValueEvent.route(namespace: "-", ioSourceID: source.objectID))
                #expect(await states.first { $0.hasAssociations }?.updateRate == 250)

                // The context is advertised with the router's agent as parent.
                let advertised = await contexts.first { _ in true }?.object
                #expect(advertised?.name == "Kitchen")
                #expect(advertised?.parentObjectID == container.identity.objectID)

                let values = try await managers[1].observeIOValue(route: route)
                try await managers[0].publish(try IOValueEvent(route: route, value: 21.5))
                #expect(await values.first { _ in true }?.value == 21.5)
                #expect(router.associations.map(\.ioActorID) == [actor.objectID])
                #expect(router.managedNodes.count == 2)
            }
            // The router stopped: it ended the association.
            let ended = await associations.first { _ in true }
            #expect(ended?.associatingRoute == nil && ended?.ioActorID == actor.objectID)
            #expect(await states.first { !$0.hasAssociations } != nil)
        }
    }

    @Test func anAgentThatLeavesIsDisassociatedAndContextUpdatesAreTaken() async throws {
        let bus = InProcessBus()
        let kitchen = Kitchen(cooking: false)
        let (source, context, router) = (kitchen.source, kitchen.context, kitchen.router)
        try await Container.withRunning(configuration: self.routerConfiguration(bus), controllers: [router]) { _ in
            try await withOnlineManagers(count: 1, bus: bus) { observers, _ in
                let observer = observers[0]
                let associations = try await observer.observeAssociate(ioContextName: "Kitchen")
                // The context is discoverable.
                let resolved = try await observer.discover(try DiscoverEvent.byCoreTypes([.ioContext])).first(
                    timeout: .seconds(10)
                )
                #expect(resolved.object?.objectID == context.objectID)

                // An actor's agent joins after the router: its advertised node is managed.
                try await kitchen.withNodeAgent(bus: bus) {
                    // Not cooking: nothing is associated. Updating the context starts cooking.
                    let completes = try await observer.update(
                        UpdateEvent(
                            IOContext(objectID: context.objectID, name: "Kitchen", customProperties: ["cooking": true])
                        )
                    )
                    let completed = try await completes.first(timeout: .seconds(10))
                    #expect(completed.object.customProperties["cooking"] == true)
                    let associate = await associations.first { _ in true }
                    #expect(associate?.associatingRoute != nil)
                    #expect(router.context.customProperties["cooking"] == true)
                }
                // The agent left (it deadvertised its identity and node): the association ends.
                let ended = await associations.first { _ in true }
                #expect(ended?.associatingRoute == nil && ended?.ioSourceID == source.objectID)
                #expect(router.managedNodes.isEmpty)
            }
        }
    }

    /// coaty-js completes an Update of the context only after publishing the Associates it brings about
    /// (`IoRouter._observeUpdateIoContext` calls `onIoContextChanged()`, which advertises the context and
    /// evaluates the rules, before `update.complete`), so the requester sees them first.
    @Test func theCompleteOfAContextUpdateFollowsTheAssociatesItBroughtAbout() async throws {
        let bus = InProcessBus()
        let kitchen = Kitchen(cooking: true)
        let (context, router) = (kitchen.context, kitchen.router)
        try await Container.withRunning(configuration: self.routerConfiguration(bus), controllers: [router]) { _ in
            try await withOnlineManagers(count: 1, bus: bus) { observers, _ in
                let observer = observers[0]
                // The Associates and Completes the observer receives, in the order they arrive.
                let filters = [
                    CoatyTopic.subscriptionFilter(.associate, filter: "Kitchen", namespace: "-"),
                    CoatyTopic.subscriptionFilter(.complete, namespace: "-"),
                ]
                let arrivals: EventStream<String> = await observer.observe(filters: filters) { delivery in
                    switch delivery.event {
                    case .associate(let associate)?: associate.associatingRoute == nil ? "disassociate" : "associate"
                    case .complete?: "complete"
                    default: nil
                    }
                }.stream
                try await kitchen.withNodeAgent(bus: bus) {
                    // Cooking: the agent's node is associated once the router manages it.
                    #expect(await arrivals.first { _ in true } == "associate")
                    let completes = try await observer.update(
                        UpdateEvent(
                            IOContext(objectID: context.objectID, name: "Kitchen", customProperties: ["cooking": false])
                        )
                    )
                    _ = try await completes.first(timeout: .seconds(10))
                    var next: [String] = []
                    for await arrival in arrivals {
                        next.append(arrival)
                        if next.count == 2 { break }
                    }
                    #expect(next == ["disassociate", "complete"])
                }
            }
        }
    }
}
