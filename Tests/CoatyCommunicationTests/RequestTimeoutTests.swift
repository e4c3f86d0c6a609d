import CoatyCore
import CoatyModel
import CoatyTesting
import Testing

@testable import CoatyCommunication

/// A request's timeout runs on the clock given to `first(timeout:clock:)`: a test advances a manual
/// clock instead of waiting it out.
@Suite(.timeLimit(.minutes(1)))
struct RequestTimeoutTests {
    @Test func aRequestTimesOutWhenItsClockHasAdvancedByTheTimeout() async throws {
        let bus = InProcessBus()
        let clock = ManualClock()
        let manager = CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(identity: Identity(name: "asking"))
        )
        try await withOnline([manager]) {
            var sleeps = clock.sleeps.makeAsyncIterator()
            let returns = try await manager.call(CallEvent(operation: "com.example.nobody"))
            let answer = Task { try await returns.first(timeout: .seconds(30), clock: clock) }
            #expect(await sleeps.next() == .seconds(30))
            clock.advance(by: .seconds(30))
            let error = await #expect(throws: CommunicationError.self) { try await answer.value }
            #expect(error?.code == .timedOut)
        }
    }
}
