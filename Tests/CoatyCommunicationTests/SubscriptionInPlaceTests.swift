import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Synchronization
import Testing

@testable import CoatyCommunication

@Suite(.timeLimit(.minutes(1)))
struct SubscriptionInPlaceTests {
    /// Two observations of one filter made together while online: the first subscribes it, and the
    /// second must not return before that subscription is in place either. It returned at once, as if
    /// the filter were subscribed already, so an event published right after it returned could be missed.
    @Test func aSecondObservationOfAFilterBeingSubscribedWaitsForTheSubscription() async throws {
        let bus = InProcessBus()
        let gate = SubscribeGate(filter: "ADV::com.example.Gated")
        let manager = CommunicationManager(
            transport: WrappingTransport(base: InProcessTransport(bus: bus)) {
                GatedSubscribeConnection(base: $0, gate: gate)
            },
            configuration: .init(identity: Identity(name: "observer"))
        )
        let publisher = CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(identity: Identity(name: "publisher"))
        )
        try await withOnline([manager, publisher]) {
            let first = Task { try await manager.observeAdvertise(objectType: "com.example.Gated") }
            for await _ in gate.entered { break }
            // The first observation's subscription is under way, not in place yet.
            let second = Task { try await manager.observeAdvertise(objectType: "com.example.Gated") }
            while manager.state.withLock({ state in
                state.machine.routing.entries.values.count { $0.filter.rawValue.contains(gate.filter) }
            }) < 2 {
                try Task.checkCancellation()  // the suite's time limit ends the wait
                await Task.yield()
            }
            let early = await SendLoopFailureTests.result(of: second, within: .milliseconds(500))
            #expect(early == nil, "the second observation returned before its subscription was in place")

            gate.open()
            let advertises = try await second.value
            _ = try await first.value
            try await publisher.publish(AdvertiseEvent(CoatyObject(objectType: "com.example.Gated", name: "seen")))
            #expect(try await advertises.first(timeout: .seconds(5)).object.name == "seen")
        }
    }
}

/// Holds the first subscription of a filter containing `filter` until ``open()``.
private final class SubscribeGate: Sendable {
    let filter: String
    let entered: AsyncStream<Void>
    private let enteredContinuation: AsyncStream<Void>.Continuation
    private let release: AsyncStream<Void>
    private let releaseContinuation: AsyncStream<Void>.Continuation
    private let isUsed = Atomic<Bool>(false)

    init(filter: String) {
        self.filter = filter
        (self.entered, self.enteredContinuation) = AsyncStream<Void>.makeStream()
        (self.release, self.releaseContinuation) = AsyncStream<Void>.makeStream()
    }

    func open() { self.releaseContinuation.finish() }

    /// Waits for ``open()`` if `filters` are the first to match.
    func pass(_ filters: [TopicFilter]) async {
        guard filters.contains(where: { $0.rawValue.contains(self.filter) }),
            !self.isUsed.exchange(true, ordering: .sequentiallyConsistent)
        else { return }
        self.enteredContinuation.yield()
        for await _ in self.release {}
    }
}

/// A connection whose gated subscription reaches the bus only once the gate opens, as a subscription
/// reaches a broker some time after it was sent.
private struct GatedSubscribeConnection: TransportConnection {
    let base: any TransportConnection
    let gate: SubscribeGate

    func publish(_ message: TransportMessage) async throws { try await self.base.publish(message) }
    func subscribe(to filters: [TopicFilter]) async throws {
        await self.gate.pass(filters)
        try await self.base.subscribe(to: filters)
    }
    func unsubscribe(from filters: [TopicFilter]) async throws { try await self.base.unsubscribe(from: filters) }
    func waitUntilClosed() async { await self.base.waitUntilClosed() }
}
