import CoatyCore
import CoatyModel
import Testing

@testable import CoatyCommunication

/// The reconnect backoff runs on the manager's clock: these tests advance a manual clock instead of
/// waiting out the delay.
@Suite(.timeLimit(.minutes(1)))
struct ReconnectBackoffTests {
    @Test func aLostConnectionIsReopenedOnceTheClockHasAdvancedByTheBackoff() async throws {
        let bus = InProcessBus()
        let clock = ManualClock()
        let manager = CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(identity: Identity(name: "patient"), initialReconnectDelay: .seconds(30)),
            clock: clock
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            var states = manager.observeCommunicationState().makeAsyncIterator()
            group.addTask { try await manager.run() }
            while await states.next() != .online {}
            var sleeps = clock.sleeps.makeAsyncIterator()

            #expect(bus.dropConnection(clientID: manager.clientID))
            #expect(await states.next() == .offline)
            #expect(await sleeps.next() == .seconds(30))
            clock.advance(by: .seconds(29))
            #expect(clock.pendingSleeps == 1)
            #expect(bus.clientIDs.isEmpty)
            clock.advance(by: .seconds(1))
            #expect(await states.next() == .online)
            #expect(bus.clientIDs == [manager.clientID])
            manager.finish()
            try await group.waitForAll()
        }
    }

    /// `finish()` during the backoff ends `run()` without waiting for the clock.
    @Test func finishDuringTheBackoffEndsRunAtOnce() async throws {
        let bus = InProcessBus()
        let clock = ManualClock()
        let manager = CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(identity: Identity(name: "leaving")),
            clock: clock
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            var states = manager.observeCommunicationState().makeAsyncIterator()
            group.addTask { try await manager.run() }
            while await states.next() != .online {}
            var sleeps = clock.sleeps.makeAsyncIterator()
            #expect(bus.dropConnection(clientID: manager.clientID))
            #expect(await sleeps.next() == .seconds(1))
            manager.finish()
            try await group.waitForAll()
            #expect(clock.pendingSleeps == 0)
            #expect(bus.clientIDs.isEmpty)
        }
    }
}
