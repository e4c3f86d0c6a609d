import CoatyCommunication
import CoatyControllers
import CoatyCore
import CoatyModel
import CoatyTesting
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct HistorianControllerTests {
    let lamp = CoatyObject(objectType: "com.example.Lamp", name: "Lamp", customProperties: ["on": false])

    /// Runs one agent per historian on `bus`, all online, and `body` with their containers.
    func withHistorians<Result: Sendable>(
        _ historians: [HistorianController],
        bus: InProcessBus = InProcessBus(),
        _ body: ([Container]) async throws -> Result
    ) async throws -> Result {
        func run(_ index: Int, _ containers: [Container]) async throws -> Result {
            guard index < historians.count else { return try await body(containers) }
            return try await Container.withRunning(
                configuration: .init(
                    transport: InProcessTransport(bus: bus),
                    communication: .init(identity: Identity(name: "Agent\(index)"))
                ),
                controllers: [historians[index]]
            ) { container in try await run(index + 1, containers + [container]) }
        }
        return try await run(0, [])
    }

    @Test func aSnapshotIsACopyWithItsParentCreatorNameAndTags() async throws {
        let historian = HistorianController()
        try await self.withHistorians([historian]) { containers in
            let snapshot = try await historian.takeSnapshot(of: self.lamp, timestamp: 1_700_000_000_123, tags: ["a"])
            #expect(snapshot.name == "com.example.Lamp Lamp")
            #expect(snapshot.parentObjectID == self.lamp.objectID)
            #expect(snapshot.creatorID == containers[0].identity.objectID)
            #expect(snapshot.creationTimestamp == 1_700_000_000_123)
            #expect(snapshot.tags == ["a"])
            #expect(snapshot.object !== self.lamp)
            #expect(try snapshot.object.jsonValue == self.lamp.jsonValue)
            // Nothing is kept without the option.
            #expect(try await historian.findSnapshots(parentObjectID: nil).isEmpty)

            let now = try await historian.takeSnapshot(of: self.lamp)
            let wallClock = Double(Int64(Date().timeIntervalSince1970 * 1000))
            #expect(abs(now.creationTimestamp - wallClock) < 60_000)
        }
    }

    /// Local snapshots are stored before they are advertised; another agent's historian keeps what it
    /// observes, and each answers Queries for snapshots, newest first.
    @Test func snapshotsAreKeptAdvertisedObservedAndQueried() async throws {
        let taker = HistorianController(options: .init(advertisesSnapshots: true, keepsLocalSnapshots: true))
        let observedStore = RecordingSnapshotStore()
        let keeper = HistorianController(
            options: .init(keepsObservedSnapshots: true, answersQueries: true),
            store: observedStore
        )
        let asker = HistorianController()
        try await self.withHistorians([taker, keeper, asker]) { containers in
            var inserted = observedStore.inserts.makeAsyncIterator()
            var taken: [Snapshot] = []
            for timestamp in [1.0, 2.0, 3.0] {
                taken.append(try await taker.takeSnapshot(of: self.lamp, timestamp: timestamp))
                let kept = try #require(await inserted.next())
                #expect(kept.map(\.objectID) == [taken.last!.objectID])
            }
            let local = try await taker.findSnapshots(parentObjectID: self.lamp.objectID)
            #expect(local.map(\.objectID) == taken.reversed().map(\.objectID))
            #expect(
                try await taker.findSnapshots(parentObjectID: nil, from: 2, to: 2).map(\.objectID) == [
                    taken[1].objectID
                ]
            )

            // Only the keeper answers: the taker does not answer Queries.
            let answer = try await asker.querySnapshots(parentObjectID: self.lamp.objectID).first(timeout: .seconds(5))
            #expect(answer.map(\.objectID) == taken.reversed().map(\.objectID))
            #expect(answer.allSatisfy { $0.creatorID == containers[0].identity.objectID && $0.object.name == "Lamp" })
        }
    }

    /// Queries for core type `Snapshot` or object type `coaty.Snapshot` are answered, with the
    /// filter applied; Queries for anything else are not.
    @Test func onlyQueriesForSnapshotsAreAnswered() async throws {
        let bus = InProcessBus()
        let answering = HistorianController(options: .init(keepsLocalSnapshots: true, answersQueries: true))
        try await self.withHistorians([answering], bus: bus) { _ in
            for timestamp in [10.0, 20.0] { try await answering.takeSnapshot(of: self.lamp, timestamp: timestamp) }
            try await withOnlineManagers(count: 1, bus: bus) { managers, _ in
                let recent = ObjectFilter(conditions: .single(.init("creationTimestamp", .greaterThan(.int(15)))))
                let byObjectType = try await managers[0].query(
                    try QueryEvent.byObjectTypes(["coaty.Snapshot"], filter: recent)
                ).first(timeout: .seconds(5))
                #expect(byObjectType.objects.compactMap { ($0 as? Snapshot)?.creationTimestamp } == [20])

                let other = try await managers[0].query(try QueryEvent.byCoreTypes([.task]))
                let error = await #expect(throws: CommunicationError.self) {
                    _ = try await other.first(timeout: .milliseconds(100))
                }
                #expect(error?.code == .timedOut)
            }
        }
    }

    @Test func theInMemoryStoreKeepsTheNewestUpToItsCapacity() {
        let store = InMemorySnapshotStore(capacity: 3)
        let snapshots = (1...5).map {
            Snapshot(name: "s\($0)", object: self.lamp, creationTimestamp: Double($0), creatorID: .random())
        }
        store.insert(Array(snapshots[0..<2]))
        store.insert([snapshots[0]])  // replaced, not added
        #expect(store.count == 2)
        store.insert(Array(snapshots[2...]))
        #expect(store.count == 3)
        #expect(store.find(ObjectFilter()).map(\.name) == ["s3", "s4", "s5"])
        #expect(
            store.find(ObjectFilter(orderBy: [("creationTimestamp", .descending)], take: 2)).map(\.name) == [
                "s5", "s4",
            ]
        )
    }
}

/// An in-memory store that reports every insert.
final class RecordingSnapshotStore: SnapshotStore {
    let base = InMemorySnapshotStore()
    let inserts: AsyncStream<[Snapshot]>
    private let continuation: AsyncStream<[Snapshot]>.Continuation

    init() { (self.inserts, self.continuation) = AsyncStream.makeStream() }

    func insert(_ snapshots: [Snapshot]) async throws {
        self.base.insert(snapshots)
        self.continuation.yield(snapshots)
    }

    func find(_ filter: ObjectFilter) async throws -> [Snapshot] { self.base.find(filter) }
}
