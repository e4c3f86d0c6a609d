import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Synchronization
import Testing

@testable import CoatyCommunication
@testable import CoatyControllers

@Suite(.timeLimit(.minutes(1)))
struct ObjectCacheControllerTests {
    let task = CoatyTask(name: "Wash up", status: .request, creatorID: .random(), creationTimestamp: 1_700_000_000_000)

    /// Runs an agent with `cache` and an owner agent, both on `bus`; the owner counts the Discovers it
    /// sees and answers them with `answer`.
    func withCacheAndOwner<Result: Sendable>(
        _ cache: ObjectCacheController,
        bus: InProcessBus = InProcessBus(),
        answer: @escaping @Sendable (DiscoverEvent) throws -> Void = { _ in },
        _ body: (Container, CommunicationManager, Counter) async throws -> Result
    ) async throws -> Result {
        let discovers = Counter()
        return try await withOnlineManagers(count: 1, bus: bus) { managers, _ in
            let owner = managers[0]
            let registration = await owner.handleDiscover { discover in
                guard discover.isDiscoveringObjectID else { return }
                discovers.increment()
                try answer(discover)
            }
            defer { registration.cancel() }
            return try await Container.withRunning(
                configuration: .init(
                    transport: InProcessTransport(bus: bus),
                    communication: .init(identity: Identity(name: "Cache"))
                ),
                controllers: [cache]
            ) { container in try await body(container, owner, discovers) }
        }
    }

    func answering(with objects: CoatyObject...) -> @Sendable (DiscoverEvent) throws -> Void {
        { discover in
            for object in objects where object.objectID == discover.objectID {
                try discover.resolve(ResolveEvent(object: object))
            }
        }
    }

    @Test func resolvesThroughADiscoverAndThenFromTheCache() async throws {
        let cache = ObjectCacheController(coreType: .task)
        try await self.withCacheAndOwner(cache, answer: self.answering(with: self.task)) { _, _, discovers in
            #expect(cache.cachedObject(self.task.objectID) == nil)
            let resolved = try await cache.resolveObject(self.task.objectID, timeout: .seconds(5))
            #expect(resolved.objectID == self.task.objectID && resolved is CoatyTask)
            #expect(cache.cachedObject(self.task.objectID) === resolved)
            let again = try await cache.resolveObject(self.task.objectID, timeout: .seconds(5))
            #expect(again === resolved)
            #expect(discovers.value == 1)

            // Removed from the cache, it is discovered again.
            cache.removeObject(self.task.objectID)
            _ = try await cache.resolveObject(self.task.objectID, timeout: .seconds(5))
            cache.removeAllObjects()
            #expect(cache.cachedObject(self.task.objectID) == nil)
            _ = try await cache.resolveObject(self.task.objectID, timeout: .seconds(5))
            #expect(discovers.value == 3)
        }
    }

    /// A call made while a resolution is pending waits for it without publishing a Discover; with
    /// `rediscover` it publishes one, and the first answer ends every waiting call.
    @Test func callsForAPendingObjectShareItsResolution() async throws {
        let cache = ObjectCacheController(coreType: .task)
        try await self.withCacheAndOwner(cache) { _, owner, discovers in
            var received = await owner.observeDiscover().makeAsyncIterator()
            try await withThrowingTaskGroup(of: CoatyObject.self) { group in
                group.addTask { try await cache.resolveObject(self.task.objectID, timeout: .seconds(30)) }
                _ = try #require(await received.next())

                // Waits, publishes nothing: it times out while the first call's Discover is pending.
                await #expect(throws: CommunicationError.self) {
                    _ = try await cache.resolveObject(self.task.objectID, timeout: .milliseconds(50))
                }
                #expect(discovers.value == 1)

                // With rediscover a second Discover goes out; answering only that one ends both calls.
                group.addTask {
                    try await cache.resolveObject(self.task.objectID, timeout: .seconds(30), rediscover: true)
                }
                let second = try #require(await received.next())
                #expect(discovers.value == 2)
                try second.resolve(ResolveEvent(object: self.task))
                var results: [ObjectID] = []
                for try await object in group { results.append(object.objectID) }
                #expect(results == [self.task.objectID, self.task.objectID])
            }
        }
    }

    /// Resolves of another core type, or that the predicate refuses, do not end a resolution; nor do
    /// they cache anything.
    @Test func acceptsOnlyItsCoreTypeAndWhatItsPredicateAccepts() async throws {
        let user = Identity(name: "Ada")
        let other = CoatyTask(name: "Sweep", status: .request, creatorID: .random(), creationTimestamp: 1)
        let cache = ObjectCacheController(coreType: .task) { $0.name != "Sweep" }
        try await self.withCacheAndOwner(cache, answer: self.answering(with: user, other, self.task)) { _, _, _ in
            for refused in [user.objectID, other.objectID] {
                let error = await #expect(throws: CommunicationError.self) {
                    _ = try await cache.resolveObject(refused, timeout: .milliseconds(100))
                }
                #expect(error?.code == .timedOut)
                #expect(cache.cachedObject(refused) == nil)
            }
            let accepted = try await cache.resolveObject(self.task.objectID, timeout: .seconds(5))
            #expect(accepted.name == "Wash up")
        }
    }

    /// An Advertise replaces a cached object but adds none; a Deadvertise removes it.
    @Test func advertisesUpdateCachedObjectsAndDeadvertisesRemoveThem() async throws {
        let cache = ObjectCacheController(coreType: .task)
        try await self.withCacheAndOwner(cache, answer: self.answering(with: self.task)) { container, owner, _ in
            _ = try await cache.resolveObject(self.task.objectID, timeout: .seconds(5))
            let uncached = CoatyTask(name: "Dry", status: .request, creatorID: .random(), creationTimestamp: 1)
            let done = CoatyTask(
                objectID: self.task.objectID,
                name: "Wash up",
                status: .done,
                creatorID: self.task.creatorID,
                creationTimestamp: self.task.creationTimestamp
            )
            // The cache applies each event where it is received, in order, so once a later marker
            // event has arrived, it has applied the ones before.
            let markers = try await container.communication.observeChannel("marker")
            var marker = markers.makeAsyncIterator()
            try await owner.publish(AdvertiseEvent(done))
            try await owner.publish(AdvertiseEvent(uncached))
            try await owner.publish(ChannelEvent(channelID: "marker", object: uncached))
            _ = try #require(await marker.next())
            #expect((cache.cachedObject(self.task.objectID) as? CoatyTask)?.status == .done)
            #expect(cache.cachedObject(uncached.objectID) == nil)

            try await owner.publish(DeadvertiseEvent(objectIDs: [self.task.objectID]))
            try await owner.publish(ChannelEvent(channelID: "marker", object: uncached))
            _ = try #require(await marker.next())
            #expect(cache.cachedObject(self.task.objectID) == nil)
        }
    }

    /// A resolution nobody waits for any more releases its response subscription at once.
    @Test func anAbandonedResolutionReleasesItsResponseSubscription() async throws {
        let cache = ObjectCacheController(coreType: .task)
        let bus = InProcessBus()
        try await self.withCacheAndOwner(cache, bus: bus) { container, owner, _ in
            let error = await #expect(throws: CommunicationError.self) {
                _ = try await cache.resolveObject(self.task.objectID, timeout: .milliseconds(50))
            }
            #expect(error?.code == .timedOut)
            try await self.expectNoResponseSubscription(of: container.communication, to: owner, on: bus)

            // Cancelling the waiting task ends it the same way.
            let waiting = Task { try await cache.resolveObject(self.task.objectID, timeout: .seconds(30)) }
            waiting.cancel()
            await #expect(throws: CancellationError.self) { _ = try await waiting.value }
            try await self.expectNoResponseSubscription(of: container.communication, to: owner, on: bus)
        }
    }

    /// Expects `manager` to hold no response subscription once its send loop has run: a released
    /// one may wait there for a batch (`CommunicationManager.deferredUnsubscribeBatch`), and a
    /// publication, which `other` receives, makes the loop send those first.
    func expectNoResponseSubscription(
        of manager: CommunicationManager,
        to other: CommunicationManager,
        on bus: InProcessBus
    ) async throws {
        let channel = try await other.observeChannel("flush")
        try await manager.publish(ChannelEvent(channelID: "flush", object: self.task))
        _ = try await channel.first(timeout: .seconds(5))
        let filters = bus.filters(ofClientID: manager.clientID).map(\.rawValue)
        #expect(filters.allSatisfy { !$0.contains("/RSV/") }, "left over: \(filters)")
    }

    /// Before a container initialised it, and once the container stops, resolving fails with
    /// `notRunning`; a call waiting when the container stops ends then, not at its timeout.
    @Test func resolvingNeedsARunningContainer() async throws {
        let cache = ObjectCacheController(coreType: .task)
        let error = await #expect(throws: CommunicationError.self) {
            _ = try await cache.resolveObject(self.task.objectID, timeout: .seconds(1))
        }
        #expect(error?.code == .notRunning)

        let bus = InProcessBus()
        let seen = bus.messages()
        try await withOnlineManagers(count: 1, bus: bus) { _, _ in
            let container = Container(
                configuration: .init(
                    transport: InProcessTransport(bus: bus),
                    communication: .init(identity: Identity(name: "Cache"))
                ),
                controllers: [cache]
            )
            try await withThrowingTaskGroup(of: Void.self) { group in
                let states = container.communication.observeCommunicationState()
                group.addTask { try await container.run() }
                // Online means initialised: the controllers' onInit runs before the agent connects.
                _ = await states.first { $0 == .online }
                group.addTask {
                    let error = await #expect(throws: CommunicationError.self) {
                        _ = try await cache.resolveObject(self.task.objectID, timeout: .seconds(60))
                    }
                    #expect(error?.code == .notRunning)
                }
                // Once its Discover is out, the call is waiting: stop the container.
                _ = await seen.first { $0.topic.contains("/DSC/") }
                container.shutdown()
                try await group.waitForAll()
            }
        }
        let late = await #expect(throws: CommunicationError.self) {
            _ = try await cache.resolveObject(self.task.objectID, timeout: .seconds(1))
        }
        #expect(late?.code == .notRunning)
    }
}

/// A count shared with handlers.
final class Counter: Sendable {
    private let count = Mutex(0)

    var value: Int { self.count.withLock { $0 } }

    func increment() { self.count.withLock { $0 += 1 } }
}
