import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Testing

@testable import CoatyCommunication

/// Nothing is lost silently: publishing online waits for room instead of dropping, a given-up request
/// is never sent, a diagnostics consumer that falls behind is told how many it skipped, and a message
/// on a topic the manager cannot parse is reported.
@Suite(.timeLimit(.minutes(1)))
struct NoSilentLossTests {
    /// Far more events than the outbox holds, published back to back while online, all arrive, in
    /// order: `publish` waits for room instead of dropping the oldest.
    @Test func publishingOnlineWaitsForRoomInsteadOfDropping() async throws {
        let count = 2_000
        try await withOnlineManagers(count: 2) { index, configuration in
            configuration.outboxCapacity = 4
            // Room for every event and the "end" marker: on a busy machine the observer may read
            // nothing until the publisher is done, and a full buffer drops its oldest.
            configuration.observerBufferSize = count + 1
        } _: { managers, _ in
            let diagnostics = managers[0].observeDiagnostics()
            let advertises = try await managers[1].observeAdvertise(objectType: "com.example.Burst")
            for index in 0...count {
                let name = index == count ? "end" : "\(index)"
                try await managers[0].publish(AdvertiseEvent(CoatyObject(objectType: "com.example.Burst", name: name)))
            }
            var received = 0
            var inOrder = true
            for await advertise in advertises {
                if advertise.object.name == "end" { break }
                if advertise.object.name != "\(received)" { inOrder = false }
                received += 1
            }
            #expect(received == count)
            #expect(inOrder)
            managers[0].finish()
            for await diagnostic in diagnostics { Issue.record("unexpected diagnostic: \(diagnostic)") }
        }
    }

    /// A Call queued while offline whose caller gave up (it dropped the response stream) is withdrawn:
    /// after the reconnect the callee sees only the Call made afterwards.
    @Test func aWithdrawnRequestIsNeverSent() async throws {
        let bus = InProcessBus()
        let caller = CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(identity: Identity(name: "caller"))
        )
        // Offline: the Call waits in the outbox; dropping its stream gives it up.
        _ = try await caller.call(CallEvent(operation: "com.example.op", parameters: ["given up"]))
        try await withOnlineManagers(count: 1, bus: bus) { managers, _ in
            let calls = try await managers[0].observeCall("com.example.op")
            try await withOnline([caller]) {
                let answered = try await caller.call(CallEvent(operation: "com.example.op", parameters: ["wanted"]))
                var iterator = calls.makeAsyncIterator()
                let first = await iterator.next()
                #expect(first?.parameter(at: 0)?.stringValue == "wanted")
                _ = answered
            }
        }
    }

    /// A diagnostics consumer that falls behind is told how many diagnostics it skipped: by the next
    /// one that fits its buffer, and at the end of the run by a last diagnostic.
    @Test func aDiagnosticsConsumerIsToldHowManyItSkipped() async throws {
        let manager = CommunicationManager(
            transport: InProcessTransport(bus: InProcessBus()),
            configuration: .init(identity: Identity(name: "slow"), observerBufferSize: 2)
        )
        let diagnostics = manager.observeDiagnostics()
        var iterator = diagnostics.makeAsyncIterator()
        for index in 0..<5 { manager.report(.init(kind: .droppedEvent, topic: "t\(index)", reason: "test")) }
        #expect(await iterator.next()?.topic == "t0")
        #expect(await iterator.next()?.topic == "t1")
        manager.report(.init(kind: .droppedEvent, topic: "t5", reason: "test"))
        let next = await iterator.next()
        #expect(next?.topic == "t5")
        #expect(next?.skipped == 3)
        // Skipped again, with no later diagnostic: the end of the run says so.
        for index in 6..<9 { manager.report(.init(kind: .droppedEvent, topic: "t\(index)", reason: "test")) }
        manager.finish()
        try await manager.run()
        var rest: [CommunicationDiagnostic] = []
        while let diagnostic = await iterator.next() { rest.append(diagnostic) }
        #expect(rest.map(\.topic) == ["t7", ""])
        #expect(rest.last?.kind == .skippedDiagnostics)
        #expect(rest.last?.skipped == 2)
    }

    /// A message on a topic the manager cannot parse, as a broker that rewrites `.` into `/` delivers
    /// it, is reported with its topic instead of dropped in silence.
    @Test func aMessageOnAnUnparsableTopicIsReported() async throws {
        let bus = InProcessBus()
        let rewriting = CommunicationManager(
            transport: RewritingTransport(base: InProcessTransport(bus: bus)),
            configuration: .init(identity: Identity(name: "observer"))
        )
        let publisher = CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(identity: Identity(name: "publisher"))
        )
        let diagnostics = rewriting.observeDiagnostics()
        try await withOnline([rewriting, publisher]) {
            // Kept until the end: a stream dropped at once releases its subscription, and the
            // message would then not arrive at all.
            let lights = try await rewriting.observeAdvertise(objectType: "com.example.Light")
            try await publisher.publish(AdvertiseEvent(CoatyObject(objectType: "com.example.Light", name: "l")))
            let diagnostic = await diagnostics.first { $0.kind == .invalidInboundEvent }
            #expect(diagnostic?.topic.contains("ADV::com/example/Light/") == true)
            withExtendedLifetime(lights) {}
        }
    }
}

/// A transport that delivers topics with every `.` turned into `/`, as RabbitMQ 3.10's MQTT plugin
/// does.
private struct RewritingTransport: Transport {
    let base: InProcessTransport

    func withConnection<Result: Sendable>(
        _ options: TransportConnectOptions,
        onMessage: @escaping @Sendable (TransportMessage) -> Void,
        _ body: (any TransportConnection) async throws -> Result
    ) async throws -> Result {
        try await self.base.withConnection(
            options,
            onMessage: { message in
                var message = message
                message.topic = String(message.topic.map { $0 == "." ? "/" : $0 })
                onMessage(message)
            },
            body
        )
    }
}
