import CoatyCommunication
import CoatyModel
import CoatyTransport
import Testing

@Suite(.timeLimit(.minutes(1)))
struct FinishBeforeRunTests {
    @Test func finishBeforeRunMakesRunReturnAtOnceAndARunAfterThatWorks() async throws {
        let bus = InProcessBus()
        let manager = CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(identity: Identity(name: "Early"))
        )
        manager.finish()
        try await manager.run()  // returns without connecting
        #expect(bus.clientIDs.isEmpty)

        // The stop request was consumed: a new run() connects and stays until finished again.
        try await withThrowingTaskGroup(of: Void.self) { group in
            let states = manager.observeCommunicationState()
            group.addTask { try await manager.run() }
            _ = await states.first { $0 == .online }
            #expect(bus.clientIDs == [manager.clientID])
            manager.finish()
            try await group.waitForAll()
        }
    }

    /// A broker that does not answer: the transport's connect hangs (for its connect timeout, 30 s by
    /// default over MQTT). `finish()` abandons the attempt at once, as it does a wait to reconnect;
    /// `run()` waited for the connect to end.
    @Test func finishWhileConnectingMakesRunReturnAtOnce() async throws {
        let (attempts, attempt) = AsyncStream<Void>.makeStream()
        let manager = CommunicationManager(
            transport: UnansweredTransport(attempt: attempt),
            configuration: .init(identity: Identity(name: "Patient"))
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await manager.run() }
            for await _ in attempts { break }
            manager.finish()
            try await group.waitForAll()  // on the old code, until the suite's time limit
        }
    }

    /// Publications still queued when `run()` ends, because the agent never got online, are dropped
    /// and reported; they were dropped without a word.
    @Test func publicationsLeftUnsentWhenRunEndsAreReported() async throws {
        let (attempts, attempt) = AsyncStream<Void>.makeStream()
        let manager = CommunicationManager(
            transport: UnansweredTransport(attempt: attempt),
            configuration: .init(identity: Identity(name: "Unheard"))
        )
        let diagnostics = manager.observeDiagnostics()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await manager.run() }
            for await _ in attempts { break }
            try await manager.publish(AdvertiseEvent(CoatyObject(objectType: "com.example.Note", name: "unsent")))
            manager.finish()
            try await group.waitForAll()
        }
        var reported: [CommunicationDiagnostic] = []
        for await diagnostic in diagnostics { reported.append(diagnostic) }
        #expect(reported.map(\.kind) == [.droppedPublication, .droppedPublication])
        #expect(reported.map(\.topic).allSatisfy { $0.contains("/ADV:") })
    }
}

/// A transport whose connection attempts hang until cancelled, as a connect to an address that drops
/// every packet does.
private struct UnansweredTransport: Transport {
    let attempt: AsyncStream<Void>.Continuation

    func withConnection<Result: Sendable>(
        _ options: TransportConnectOptions,
        onMessage: @escaping @Sendable (TransportMessage) -> Void,
        _ body: (any TransportConnection) async throws -> Result
    ) async throws -> Result {
        self.attempt.yield()
        try await Task.sleep(for: .seconds(3600))  // the hang; only cancellation ends it
        throw TransportError(.timedOut, "no answer")
    }
}
