import CoatyCore
import CoatyModel
import CoatyTransport
import Synchronization
import Testing

@testable import CoatyCommunication

@Suite(.timeLimit(.minutes(1)))
struct SendLoopFailureTests {
    /// An observation made while the connection is failing waits for its subscription in the send loop's
    /// batch. When an earlier command of that batch fails, the connection is given up; the observation
    /// must still return (its filter is subscribed on the reconnect) instead of waiting for good, as it
    /// did before, even after `run()` returned.
    @Test func observersWaitingInAFailedBatchAreReleasedAndServedAfterTheReconnect() async throws {
        let bus = InProcessBus()
        let fault = FaultSwitch()
        let manager = Self.manager(named: "flaky", on: bus) { FailingConnection(base: $0, fault: fault) }
        let publisher = CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(identity: Identity(name: "publisher"))
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            var states = manager.observeCommunicationState().makeAsyncIterator()
            group.addTask { try await manager.run() }
            while await states.next() != .online {}
            let publisherStates = publisher.observeCommunicationState()
            group.addTask { try await publisher.run() }
            _ = await publisherStates.first { $0 == .online }

            // A finished request leaves its unsubscription queued: this transport cannot release it
            // without waiting, so it waits for the send loop's next batch.
            _ = try? await manager.call(CallEvent(operation: "com.example.nobody")).first(timeout: .milliseconds(1))
            fault.isFailing.store(true, ordering: .sequentiallyConsistent)
            // The observation's subscription joins that batch, behind the unsubscription, which fails.
            // A task of its own, so that the test waits for it with a deadline instead of hanging with it
            // if the observation never returns.
            let observation = Task { try await manager.observeAdvertise(objectType: "com.example.Thing") }
            while await states.next() == .online {}
            fault.isFailing.store(false, ordering: .sequentiallyConsistent)
            while await states.next() != .online {}

            let advertises = try #require(
                await Self.result(of: observation, within: .seconds(10)),
                "the observation still waits for its subscription after the reconnect"
            ).get()
            try await publisher.publish(AdvertiseEvent(CoatyObject(objectType: "com.example.Thing", name: "after")))
            #expect(try await advertises.first(timeout: .seconds(5)).object.name == "after")
            manager.finish()
            publisher.finish()
            try await group.waitForAll()
        }
    }
}

extension SendLoopFailureTests {
    /// A connection that never confirms a subscription keeps the send loop waiting; an observation
    /// queued behind it must still end when its task is cancelled, instead of outliving it.
    @Test func anObservationWaitingForItsSubscriptionEndsWithItsTask() async throws {
        let bus = InProcessBus()
        let fault = FaultSwitch()
        let manager = Self.manager(named: "stalled", on: bus) { StallingConnection(base: $0, fault: fault) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            let states = manager.observeCommunicationState()
            group.addTask { try await manager.run() }
            _ = await states.first { $0 == .online }
            fault.isFailing.store(true, ordering: .sequentiallyConsistent)
            let first = Task { try await manager.observeAdvertise(objectType: "com.example.First") }
            let second = Task { try await manager.observeAdvertise(objectType: "com.example.Second") }
            for observation in [second, first] {
                observation.cancel()
                #expect(
                    await Self.result(of: observation, within: .seconds(10)) != nil,
                    "a cancelled observation still waits for its subscription"
                )
            }
            group.cancelAll()
            do { try await group.waitForAll() } catch is CancellationError {}
        }
    }

    /// A manager on `bus` whose connections are wrapped by `wrap`; it reconnects after 10 ms.
    static func manager(
        named name: String,
        on bus: InProcessBus,
        wrap: @escaping @Sendable (any TransportConnection) -> any TransportConnection
    ) -> CommunicationManager {
        CommunicationManager(
            transport: WrappingTransport(base: InProcessTransport(bus: bus), wrap: wrap),
            configuration: .init(identity: Identity(name: name), initialReconnectDelay: .milliseconds(10))
        )
    }

    /// The first message on `tap` whose topic contains `topicPart`, or `nil` if none comes within
    /// `limit`.
    static func firstMessage(
        containing topicPart: String,
        on tap: AsyncStream<TransportMessage>,
        within limit: Duration
    ) async throws -> TransportMessage? {
        let arrival = Task {
            var messages = tap.makeAsyncIterator()
            return try await next(&messages) { $0.contains(topicPart) }
        }
        defer { arrival.cancel() }
        return try await Self.result(of: arrival, within: limit)?.get()
    }

    /// Waits until the manager whose states `states` iterates has gone offline and come online again.
    static func reconnected(_ states: inout EventStream<CommunicationState>.AsyncIterator) async {
        while await states.next() == .online {}
        while await states.next() != .online {}
    }

    /// The task's result, or `nil` if it has not finished within `limit` (the task is left running).
    static func result<Success: Sendable>(
        of task: Task<Success, any Error>,
        within limit: Duration
    ) async -> Result<Success, any Error>? {
        let outcome = Mutex<CheckedContinuation<Result<Success, any Error>?, Never>?>(nil)
        return await withCheckedContinuation { continuation in
            outcome.withLock { $0 = continuation }
            let finish: @Sendable (Result<Success, any Error>?) -> Void = { result in
                outcome.withLock { $0.take() }?.resume(returning: result)
            }
            Task { finish(await task.result) }
            Task {
                try? await Task.sleep(for: limit)
                finish(nil)
            }
        }
    }
}

/// A connection whose subscriptions never complete while the switch is on (until cancelled).
private struct StallingConnection: TransportConnection {
    let base: any TransportConnection
    let fault: FaultSwitch

    func publish(_ message: TransportMessage) async throws { try await self.base.publish(message) }
    func subscribe(to filters: [TopicFilter]) async throws {
        if self.fault.isFailing.load(ordering: .sequentiallyConsistent) {
            try await Task.sleep(for: .seconds(3_600))
        }
        try await self.base.subscribe(to: filters)
    }
    func unsubscribe(from filters: [TopicFilter]) async throws { try await self.base.unsubscribe(from: filters) }
    func waitUntilClosed() async { await self.base.waitUntilClosed() }
}

private final class FaultSwitch: Sendable {
    let isFailing = Atomic<Bool>(false)
}

/// A connection without the optional `…WithoutWaiting` methods that fails every call while the switch is
/// on, as a dying connection does.
private struct FailingConnection: TransportConnection {
    let base: any TransportConnection
    let fault: FaultSwitch

    private func check() throws {
        if self.fault.isFailing.load(ordering: .sequentiallyConsistent) {
            throw TransportError(.connectionLost, "the connection is failing")
        }
    }

    func publish(_ message: TransportMessage) async throws {
        try self.check()
        try await self.base.publish(message)
    }
    func subscribe(to filters: [TopicFilter]) async throws {
        try self.check()
        try await self.base.subscribe(to: filters)
    }
    func unsubscribe(from filters: [TopicFilter]) async throws {
        try self.check()
        try await self.base.unsubscribe(from: filters)
    }
    func waitUntilClosed() async { await self.base.waitUntilClosed() }
}

extension SendLoopFailureTests {
    /// A publication whose send fails because the connection is failing goes back to the outbox, and
    /// must go out once the manager is online again, with nothing else published to wake the send
    /// loop. The loop waited for the next publication instead: an agent with nothing more to say
    /// never sent it.
    @Test func aPublicationRequeuedByAFailedConnectionGoesOutAfterTheReconnect() async throws {
        let bus = InProcessBus()
        let faults = OneTimeFaults()
        let manager = Self.manager(named: "requeue", on: bus) { OneTimeFaultConnection(base: $0, faults: faults) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            var states = manager.observeCommunicationState().makeAsyncIterator()
            group.addTask { try await manager.run() }
            while await states.next() != .online {}
            let tap = bus.messages()

            faults.failNextPublish.store(true, ordering: .sequentiallyConsistent)
            try await manager.publish(AdvertiseEvent(CoatyObject(objectType: "com.example.Thing", name: "requeued")))
            await Self.reconnected(&states)

            let advertise = try #require(
                await Self.firstMessage(containing: "ADV::com.example.Thing", on: tap, within: .seconds(10)),
                "the requeued publication was not sent after the reconnect"
            )
            #expect(String(decoding: advertise.payload, as: UTF8.self).contains("requeued"))
            manager.finish()
            try await group.waitForAll()
        }
    }
}

extension SendLoopFailureTests {
    /// The send loop takes the queued control commands and publications together. When a command of
    /// that batch fails with the connection, the publications it took must go back to the outbox and
    /// out after the reconnect, as those of a failed send do. They were dropped, without a diagnostic.
    @Test func publicationsTakenWithAFailingUnsubscriptionGoOutAfterTheReconnect() async throws {
        let bus = InProcessBus()
        let faults = OneTimeFaults()
        let manager = Self.manager(named: "batch", on: bus) { OneTimeFaultConnection(base: $0, faults: faults) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            var states = manager.observeCommunicationState().makeAsyncIterator()
            group.addTask { try await manager.run() }
            while await states.next() != .online {}
            var observation: EventStream<ChannelEvent>? = try await manager.observeChannel("released")
            let tap = bus.messages()

            // Hold the send loop in a publication, so what follows is queued for its next batch.
            let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
            let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
            faults.gate.withLock { $0 = .init(topic: "/CHN:held/", entered: enteredContinuation, release: release) }
            try await manager.publish(ChannelEvent(channelID: "held", objects: []))
            for await _ in entered { break }
            // The next batch: an unsubscription (the observation's last stream ends), which fails, and
            // an Advertise.
            _ = observation
            observation = nil
            try await manager.publish(AdvertiseEvent(CoatyObject(objectType: "com.example.Thing", name: "batched")))
            faults.failNextUnsubscribe.store(true, ordering: .sequentiallyConsistent)
            releaseContinuation.finish()
            await Self.reconnected(&states)

            let advertise = try #require(
                await Self.firstMessage(containing: "ADV::com.example.Thing", on: tap, within: .seconds(10)),
                "the Advertise taken with the failed unsubscription was not sent after the reconnect"
            )
            #expect(String(decoding: advertise.payload, as: UTF8.self).contains("batched"))
            let unsubscriptionFailed = !faults.failNextUnsubscribe.load(ordering: .sequentiallyConsistent)
            #expect(unsubscriptionFailed)
            manager.finish()
            try await group.waitForAll()
        }
    }
}

extension SendLoopFailureTests {
    /// An observation made while a new connection publishes the join waits for the send loop. When
    /// that connection fails, the observation must return (its filter is registered for the next
    /// connect) instead of waiting for a connection that may not come for a long time: it waited until
    /// the manager was online again.
    @Test func anObservationQueuedWhenTheConnectionFailsReturnsWhileOffline() async throws {
        let bus = InProcessBus()
        let faults = OneTimeFaults()
        let manager = CommunicationManager(
            transport: FaultyTransport(base: InProcessTransport(bus: bus), faults: faults),
            configuration: .init(identity: Identity(name: "joining"), initialReconnectDelay: .milliseconds(10))
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            var states = manager.observeCommunicationState().makeAsyncIterator()
            group.addTask { try await manager.run() }
            while await states.next() != .online {}

            // Hold the next connection in its join, after its subscriptions.
            let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
            let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
            faults.gate.withLock {
                $0 = .init(topic: "/ADV:Identity/", entered: enteredContinuation, release: release)
            }
            #expect(bus.dropConnection(clientID: manager.clientID))
            for await _ in entered { break }
            let observation = Task { try await manager.observeAdvertise(objectType: "com.example.Thing") }
            while !manager.state.withLock({ $0.machine.hasQueuedSubscription }) {
                try Task.checkCancellation()
                await Task.yield()
            }

            // That connection fails before it comes online, and no other can be opened.
            faults.refuseConnections.store(true, ordering: .sequentiallyConsistent)
            #expect(bus.dropConnection(clientID: manager.clientID))
            releaseContinuation.finish()
            #expect(
                await Self.result(of: observation, within: .seconds(10)) != nil,
                "the observation still waits for its subscription while the manager is offline"
            )
            #expect(manager.communicationState == .offline)
            group.cancelAll()
            try await group.waitForAll()
        }
    }
}

/// The in-process transport with each connection wrapped in a ``OneTimeFaultConnection``, refusing
/// new connections while `refuseConnections` is set.
private struct FaultyTransport: Transport {
    let base: InProcessTransport
    let faults: OneTimeFaults

    func withConnection<Result: Sendable>(
        _ options: TransportConnectOptions,
        onMessage: @escaping @Sendable (TransportMessage) -> Void,
        _ body: (any TransportConnection) async throws -> Result
    ) async throws -> Result {
        if self.faults.refuseConnections.load(ordering: .sequentiallyConsistent) {
            throw TransportError(.connectFailed, "connections are refused")
        }
        return try await self.base.withConnection(options, onMessage: onMessage) { connection in
            try await body(OneTimeFaultConnection(base: connection, faults: self.faults))
        }
    }
}

/// Faults that each hit the next call of their kind, once.
private final class OneTimeFaults: Sendable {
    let failNextPublish = Atomic<Bool>(false)
    let failNextUnsubscribe = Atomic<Bool>(false)
    let refuseConnections = Atomic<Bool>(false)
    /// When set, the publication on a topic containing `topic` yields to `entered`, then waits until
    /// `release` finishes.
    let gate = Mutex<PublishGate?>(nil)

    struct PublishGate: Sendable {
        let topic: String
        let entered: AsyncStream<Void>.Continuation
        let release: AsyncStream<Void>
    }

    static func fail(_ fault: borrowing Atomic<Bool>) throws {
        if fault.exchange(false, ordering: .sequentiallyConsistent) {
            throw TransportError(.connectionLost, "the connection is failing")
        }
    }
}

/// A connection without the optional `…WithoutWaiting` methods whose next publication or
/// unsubscription fails when its fault is armed, and whose publication on a gated topic waits.
private struct OneTimeFaultConnection: TransportConnection {
    let base: any TransportConnection
    let faults: OneTimeFaults

    func publish(_ message: TransportMessage) async throws {
        try OneTimeFaults.fail(self.faults.failNextPublish)
        let gate = self.faults.gate.withLock { gate in
            message.topic.contains(gate?.topic ?? "\u{0}") ? gate.take() : nil
        }
        if let gate {
            gate.entered.yield()
            for await _ in gate.release {}
        }
        try await self.base.publish(message)
    }
    func subscribe(to filters: [TopicFilter]) async throws { try await self.base.subscribe(to: filters) }
    func unsubscribe(from filters: [TopicFilter]) async throws {
        try OneTimeFaults.fail(self.faults.failNextUnsubscribe)
        try await self.base.unsubscribe(from: filters)
    }
    func waitUntilClosed() async { await self.base.waitUntilClosed() }
}
