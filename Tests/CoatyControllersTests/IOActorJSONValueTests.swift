import CoatyCommunication
import CoatyControllers
import CoatyCore
import CoatyModel
import CoatyTesting
import Testing

/// An IO actor that does not use raw IO values gets values that parse as JSON;
/// anything else is dropped and reported. An actor that uses raw IO values gets every payload.
@Suite(.timeLimit(.minutes(1)))
struct IOActorJSONValueTests {
    /// Associates `actor` with a source through `router`, runs `body` with the actor's controller,
    /// the route and the actor agent's diagnostics.
    private func withAssociatedActor(
        _ actor: IOActor,
        _ body: (IOActorController, String, CommunicationManager, EventStream<CommunicationDiagnostic>) async throws ->
            Void
    ) async throws {
        let bus = InProcessBus()
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
            ) { container in
                let diagnostics = container.communication.observeDiagnostics()
                var states = try actors.observeAssociation(for: actor).makeAsyncIterator()
                #expect(await states.next() == false)
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
                try await body(actors, route, router, diagnostics)
            }
        }
    }

    @Test func jsonActorGetsOnlyValuesThatParseAsJSON() async throws {
        let actor = IOActor(name: "Display", valueType: "com.example.Counter")
        try await self.withAssociatedActor(actor) { actors, route, router, diagnostics in
            let values = try actors.observeIOValues(for: actor)
            try await router.publish(try IOValueEvent(route: route, bytes: Array("not json".utf8)))
            try await router.publish(try IOValueEvent(route: route, bytes: [0x01, 0x02, 0xFF]))
            try await router.publish(try IOValueEvent(route: route, value: ["value": 22.5]))
            let value = try await values.first(timeout: .seconds(5))
            #expect(value.value == ["value": 22.5])
            var reports = diagnostics.makeAsyncIterator()
            for _ in 0..<2 {
                let diagnostic = try #require(await reports.next())
                #expect(diagnostic.kind == .invalidInboundEvent && diagnostic.topic == route)
                #expect(diagnostic.reason.contains("not valid JSON"))
            }
        }
    }

    @Test func rawActorGetsEveryPayloadAsItIs() async throws {
        let actor = IOActor(name: "Camera", valueType: "com.example.Frame", useRawIoValues: true)
        try await self.withAssociatedActor(actor) { actors, route, router, _ in
            var values = try actors.observeIOValues(for: actor).makeAsyncIterator()
            try await router.publish(try IOValueEvent(route: route, bytes: [0x01, 0x02, 0xFF]))
            try await router.publish(try IOValueEvent(route: route, value: 42))
            #expect(await values.next()?.payload == [0x01, 0x02, 0xFF])
            #expect(await values.next()?.payload == Array("42".utf8))
        }
    }
}
