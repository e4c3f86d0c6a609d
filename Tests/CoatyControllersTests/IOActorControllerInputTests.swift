import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Testing

@testable import CoatyCommunication
@testable import CoatyControllers

/// What an `IOActorController` does with Associates it cannot use.
@Suite(.timeLimit(.minutes(1)))
struct IOActorControllerInputTests {
    /// A received Associate whose route is a filter, not a topic name (coaty-js accepts any non-empty
    /// route), is ignored; the Associates after it still work.
    @Test func anAssociateWithAnUnusableRouteIsIgnored() async throws {
        let bus = InProcessBus()
        let actor = IOActor(name: "Display", valueType: "com.example.Counter")
        let sourceID = ObjectID.random()
        let actors = IOActorController()
        try await withOnlineManagers(count: 1, bus: bus) { managers, _ in
            let router = managers[0]
            try await Container.withRunning(
                configuration: .init(
                    transport: InProcessTransport(bus: bus),
                    communication: .init(
                        identity: Identity(name: "Actor"),
                        ioNodes: [IONode(name: "Lab", ioActors: [actor])]
                    )
                ),
                controllers: [actors]
            ) { _ in
                var states = try actors.observeAssociation(for: actor).makeAsyncIterator()
                #expect(await states.next() == false)
                // Built by hand: this package refuses to make such an Associate.
                let topic = CoatyTopic(
                    namespace: CoatyTopic.defaultNamespace,
                    code: .associate,
                    filter: "Lab",
                    sourceID: router.identity.objectID
                ).formatted
                let payload = """
                    {"ioSourceId":"\(sourceID)","ioActorId":"\(actor.objectID)","associatingRoute":"coaty/3/-/IOV/+"}
                    """
                #expect(bus.publish(TransportMessage(topic: topic, payload: Array(payload.utf8))))

                let route = IOValueEvent.route(namespace: CoatyTopic.defaultNamespace, ioSourceID: sourceID)
                try await router.publish(
                    AssociateEvent(
                        ioContextName: "Lab",
                        ioSourceID: sourceID,
                        ioActorID: actor.objectID,
                        associatingRoute: route
                    )
                )
                #expect(await states.next() == true)
                let values = try actors.observeIOValues(for: actor)
                try await router.publish(try IOValueEvent(route: route, value: .int(7)))
                #expect(await values.first { _ in true }?.value == .int(7))
            }
        }
    }
}
