import CoatyCommunication
import CoatyModel
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
}
