import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Synchronization
import Testing

@testable import CoatyCommunication

@Suite(.timeLimit(.minutes(1)))
struct HandlerTests {
    @Test func handlerAnswersCallsUntilCancelled() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let registration = try await managers[1].handleCalls("com.example.add") { call in
                guard let a = call.parameter(at: 0)?.intValue, let b = call.parameter(at: 1)?.intValue else {
                    throw CommunicationError(.invalidArgument, "not two integers")
                }
                try call.returnResult(.int(a + b))
            }
            let sum = try await managers[0].call(CallEvent(operation: "com.example.add", parameters: [2, 3]))
                .first(timeout: .seconds(5))
            #expect(sum.result == 5)

            // A throwing handler is logged; the next Call is still answered.
            let bad = try await managers[0].call(CallEvent(operation: "com.example.add", parameters: ["x"]))
            let good = try await managers[0].call(CallEvent(operation: "com.example.add", parameters: [40, 2]))
            #expect(try await good.first(timeout: .seconds(5)).result == 42)
            await #expect { _ = try await bad.first(timeout: .milliseconds(50)) } throws: {
                ($0 as? CommunicationError)?.code == .timedOut
            }

            registration.cancel()
            #expect(!registration.isActive)
            let unanswered = try await managers[0].call(CallEvent(operation: "com.example.add", parameters: [1, 1]))
            await #expect { _ = try await unanswered.first(timeout: .milliseconds(50)) } throws: {
                ($0 as? CommunicationError)?.code == .timedOut
            }
        }
    }

    @Test func handlersEndWhenTheManagerStops() async throws {
        let registration = try await withOnlineManagers(count: 1) { managers, _ in
            let registration = try await managers[0].handleCalls("com.example.noop") { try $0.returnResult(nil) }
            #expect(registration.isActive)
            return registration
        }
        #expect(!registration.isActive)
    }

    @Test func discoverAndQueryHandlersAnswer() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let store = [thing("Thing1", floor: 5), thing("Thing2", floor: 7)]
            let discovers = await managers[1].handleDiscover { discover in
                guard let match = store.first(where: { $0.objectID == discover.objectID }) else { return }
                try discover.resolve(ResolveEvent(object: match))
            }
            let queries = await managers[1].handleQuery { query in
                try query.retrieve(RetrieveEvent(objects: query.objectFilter.apply(to: store)))
            }
            defer {
                discovers.cancel()
                queries.cancel()
            }
            let resolve = try await managers[0].discover(DiscoverEvent.byObjectID(store[1].objectID))
                .first(timeout: .seconds(5))
            #expect(resolve.object?.objectID == store[1].objectID)
            let query = try QueryEvent.byObjectTypes(
                ["com.example.Thing"],
                filter: ObjectFilter(conditions: .and([FilterCondition("floor", .equals(5))]))
            )
            let retrieve = try await managers[0].query(query).first(timeout: .seconds(5))
            #expect(retrieve.objects.map(\.objectID) == [store[0].objectID])
        }
    }

    /// A request published directly must not overtake a one-way event the same task queued before it.
    @Test func requestsDoNotOvertakeQueuedPublications() async throws {
        try await withOnlineManagers(count: 2) { managers, bus in
            let taps = bus.messages()
            let registration = try await managers[1].handleCalls("com.example.noop") { try $0.returnResult(nil) }
            defer { registration.cancel() }
            let things = (0..<20).map { thing("Thing\($0)") }
            for object in things { try await managers[0].publish(AdvertiseEvent(object)) }
            _ = try await managers[0].call(CallEvent(operation: "com.example.noop")).first(timeout: .seconds(5))
            var order: [String] = []
            for await message in taps {
                if message.topic.contains("/ADV:CoatyObject/") || message.topic.contains("/CLL:") {
                    order.append(message.topic.contains("/CLL:") ? "call" : "advertise")
                }
                if order.last == "call" { break }
            }
            #expect(order == Array(repeating: "advertise", count: 20) + ["call"])
        }
    }

    /// Over a connection that takes unsubscriptions without waiting, a finished request's response
    /// subscription is held until the next request, whose write takes it along: after each call only
    /// the last one's is left.
    @Test func finishedRequestsReleaseTheirResponseSubscriptionsWithTheNextRequest() async throws {
        let (caller, callee, bus) = Self.callerAndCallee(releaseHoldTime: .seconds(3_600)) { $0 }
        try await withOnline([caller, callee]) {
            let registration = try await callee.handleCalls("com.example.noop") { try $0.returnResult(nil) }
            defer { registration.cancel() }
            for _ in 0..<20 {
                _ = try await caller.call(CallEvent(operation: "com.example.noop")).first(timeout: .seconds(5))
                let filters = Self.filters(of: caller.clientID, on: bus).filter { $0.contains("/RTN/") }
                #expect(filters.count == 1, "left over: \(filters)")
            }
        }
    }

    /// A held release that no request takes along goes out on its own once the hold time is over.
    @Test(.timeLimit(.minutes(1)))
    func aHeldReleaseGoesOutAfterTheHoldTime() async throws {
        let log = EntryLog()
        let (unsubscribed, unsubscribe) = AsyncStream.makeStream(of: [TopicFilter].self)
        let (caller, callee, bus) = Self.callerAndCallee(releaseHoldTime: .milliseconds(20)) {
            RecordingConnection(base: $0, log: log, unsubscribed: unsubscribe)
        }
        try await withOnline([caller, callee]) {
            let registration = try await callee.handleCalls("com.example.noop") { try $0.returnResult(nil) }
            defer { registration.cancel() }
            _ = try await caller.call(CallEvent(operation: "com.example.noop")).first(timeout: .seconds(5))
            var iterator = unsubscribed.makeAsyncIterator()
            let released = await iterator.next()
            #expect(released?.count == 1 && released?.first?.rawValue.contains("/RTN/") == true)
            let filters = Self.filters(of: caller.clientID, on: bus).filter { $0.contains("/RTN/") }
            #expect(filters.isEmpty, "left over: \(filters)")
            // On its own: not inside a request's write.
            #expect(log.entries.withLock { $0.last } == "unsubscribe /RTN")
        }
    }

    /// Over a connection without ``TransportConnection/unsubscribeWithoutWaiting(from:)``, finished
    /// requests release their response subscriptions through the send loop, in batches, not one
    /// wake-up each, and the next wake-up releases them all.
    @Test func finishedRequestsReleaseTheirResponseSubscriptionsInBatches() async throws {
        let (caller, callee, bus) = Self.callerAndCallee { WaitingUnsubscribeConnection(base: $0) }
        try await withOnline([caller, callee]) {
            let registration = try await callee.handleCalls("com.example.noop") { try $0.returnResult(nil) }
            defer { registration.cancel() }
            for _ in 0..<(CommunicationManager.deferredUnsubscribeBatch - 1) {
                _ = try await caller.call(CallEvent(operation: "com.example.noop")).first(timeout: .seconds(5))
            }
            // Fewer than a batch: still subscribed, waiting for the send loop.
            let waiting = Self.filters(of: caller.clientID, on: bus).filter { $0.contains("/RTN/") }
            #expect(waiting.count == CommunicationManager.deferredUnsubscribeBatch - 1)
            for _ in 0..<40 {
                _ = try await caller.call(CallEvent(operation: "com.example.noop")).first(timeout: .seconds(5))
            }
            // A queued publication wakes the send loop, which sends the pending unsubscriptions first.
            let advertises = await callee.observeAdvertise(coreType: .coatyObject)
            try await caller.publish(AdvertiseEvent(thing()))
            _ = try await advertises.first(timeout: .seconds(5))
            let filters = Self.filters(of: caller.clientID, on: bus)
            #expect(filters.allSatisfy { !$0.contains("/RTN/") }, "left over: \(filters)")
        }
    }

    /// A request's response subscription and the request itself are handed to the connection inside
    /// one `coalescingWrites` call, so that an MQTT connection writes them together.
    /// The next request's write also takes the finished one's release, after the request.
    @Test func aRequestsSubscriptionAndPublicationAreHandedOverTogether() async throws {
        let log = EntryLog()
        let (caller, callee, _) = Self.callerAndCallee(releaseHoldTime: .seconds(3_600)) {
            RecordingConnection(base: $0, log: log)
        }
        try await withOnline([caller, callee]) {
            let registration = try await callee.handleCalls("com.example.noop") { try $0.returnResult(nil) }
            defer { registration.cancel() }
            log.entries.withLock { $0 = [] }
            _ = try await caller.call(CallEvent(operation: "com.example.noop")).first(timeout: .seconds(5))
            let entries = log.entries.withLock { $0 }
            #expect(entries == ["begin", "subscribe /RTN", "publish /CLL:", "end"])
            log.entries.withLock { $0 = [] }
            _ = try await caller.call(CallEvent(operation: "com.example.noop")).first(timeout: .seconds(5))
            let next = log.entries.withLock { $0 }
            #expect(next == ["begin", "subscribe /RTN", "publish /CLL:", "unsubscribe /RTN", "end"])
        }
    }

    /// A caller whose connections are wrapped by `wrap` and a plain callee, on one in-process bus.
    private static func callerAndCallee(
        releaseHoldTime: Duration = .milliseconds(20),
        wrap: @escaping @Sendable (any TransportConnection) -> any TransportConnection
    ) -> (caller: CommunicationManager, callee: CommunicationManager, bus: InProcessBus) {
        let bus = InProcessBus()
        var configuration = CommunicationManager.Configuration(identity: Identity(name: "caller"))
        configuration.releaseHoldTime = releaseHoldTime
        let caller = CommunicationManager(
            transport: WrappingTransport(base: InProcessTransport(bus: bus), wrap: wrap),
            configuration: configuration
        )
        let callee = CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(identity: Identity(name: "callee"))
        )
        return (caller, callee, bus)
    }

    private static func filters(of clientID: String, on bus: InProcessBus) -> [String] {
        bus.filters(ofClientID: clientID).map(\.rawValue)
    }
}

/// A connection that publishes without waiting but has no
/// ``TransportConnection/unsubscribeWithoutWaiting(from:)``.
private struct WaitingUnsubscribeConnection: TransportConnection {
    let base: any TransportConnection

    func publish(_ message: TransportMessage) async throws { try await self.base.publish(message) }
    func publishWithoutWaiting(_ message: TransportMessage) throws -> Bool {
        try self.base.publishWithoutWaiting(message)
    }
    func subscribe(to filters: [TopicFilter]) async throws { try await self.base.subscribe(to: filters) }
    func unsubscribe(from filters: [TopicFilter]) async throws { try await self.base.unsubscribe(from: filters) }
    func waitUntilClosed() async { await self.base.waitUntilClosed() }
}

/// A connection that logs what is handed to it without waiting, and where `coalescingWrites` begins
/// and ends.
private struct RecordingConnection: TransportConnection {
    let base: any TransportConnection
    let log: EntryLog
    /// Told each unsubscription handed over without waiting.
    var unsubscribed: AsyncStream<[TopicFilter]>.Continuation?

    private func record(_ entry: String) { self.log.entries.withLock { $0.append(entry) } }

    private static func code(of topic: String) -> String {
        topic.split(separator: "/").dropFirst(3).first.map { "/" + $0.prefix(4) } ?? topic
    }

    func publish(_ message: TransportMessage) async throws { try await self.base.publish(message) }
    func publishWithoutWaiting(_ message: TransportMessage) throws -> Bool {
        self.record("publish \(Self.code(of: message.topic))")
        return try self.base.publishWithoutWaiting(message)
    }
    func subscribe(to filters: [TopicFilter]) async throws { try await self.base.subscribe(to: filters) }
    func subscribeWithoutWaiting(to filters: [TopicFilter]) throws -> Bool {
        self.record("subscribe \(filters.map { Self.code(of: $0.rawValue) }.joined(separator: ","))")
        return try self.base.subscribeWithoutWaiting(to: filters)
    }
    func unsubscribe(from filters: [TopicFilter]) async throws { try await self.base.unsubscribe(from: filters) }
    func unsubscribeWithoutWaiting(from filters: [TopicFilter]) throws -> Bool {
        self.record("unsubscribe \(filters.map { Self.code(of: $0.rawValue) }.joined(separator: ","))")
        defer { self.unsubscribed?.yield(filters) }
        return try self.base.unsubscribeWithoutWaiting(from: filters)
    }
    func coalescingWrites<Result>(_ body: () throws -> Result) rethrows -> Result {
        self.record("begin")
        defer { self.record("end") }
        return try body()
    }
    func waitUntilClosed() async { await self.base.waitUntilClosed() }
}

private final class EntryLog: Sendable {
    let entries = Mutex<[String]>([])
}
