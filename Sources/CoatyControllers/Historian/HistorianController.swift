public import CoatyCommunication
import CoatyCore
public import CoatyModel
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Takes snapshots of objects, keeps them, and answers Queries for them (coaty-js `HistorianController`).
///
/// ``takeSnapshot(of:timestamp:tags:)`` makes a `Snapshot` of an object at a point in time: a copy
/// of the object, with this agent as its creator. What happens to snapshots follows the
/// ``Options``, all off by default as in coaty-js: advertise the ones taken here, keep them in the
/// ``SnapshotStore``, keep the ones other agents advertise, and answer Queries for snapshots from the
/// store. ``querySnapshots(parentObjectID:)`` asks the historians of other agents;
/// ``findSnapshots(parentObjectID:from:to:)`` and ``findSnapshots(_:)`` read the local store.
///
/// Where this differs from coaty-js:
/// - the store is a ``SnapshotStore`` (by default a bounded ``InMemorySnapshotStore``) instead of a
///   database named in the options;
/// - a Query is answered when it asks for core type `Snapshot` (as in coaty-js) or for object type
///   `coaty.Snapshot` (which coaty-js ignores), with the stored snapshots of the queried types only,
///   so every Retrieve passes the requester's type check;
/// - the snapshotted object is copied through its JSON, as coaty-js clones it, so later changes to a
///   mutable subclass do not change the history.
///
/// ```swift
/// let historian = HistorianController(options: .init(advertisesSnapshots: true, keepsLocalSnapshots: true))
/// // … in a container with [historian], once started:
/// let snapshot = try await historian.takeSnapshot(of: light, tags: ["switched"])
/// let history = try await historian.findSnapshots(parentObjectID: light.objectID)
/// ```
public final class HistorianController: Controller {
    /// What the controller does with snapshots (coaty-js controller options; all `false` by default).
    public struct Options: Sendable, Hashable {
        /// Advertise each snapshot taken here (`shouldAdvertiseSnapshots`).
        public var advertisesSnapshots: Bool
        /// Store each snapshot taken here, before it is advertised (`shouldPersistLocalSnapshots`).
        public var keepsLocalSnapshots: Bool
        /// Store the snapshots other agents advertise (`shouldPersistObservedSnapshots`).
        public var keepsObservedSnapshots: Bool
        /// Answer Queries for snapshots from the store (`shouldReplyToQueries`).
        public var answersQueries: Bool

        /// Creates options; everything is off unless given.
        public init(
            advertisesSnapshots: Bool = false,
            keepsLocalSnapshots: Bool = false,
            keepsObservedSnapshots: Bool = false,
            answersQueries: Bool = false
        ) {
            self.advertisesSnapshots = advertisesSnapshots
            self.keepsLocalSnapshots = keepsLocalSnapshots
            self.keepsObservedSnapshots = keepsObservedSnapshots
            self.answersQueries = answersQueries
        }
    }

    /// What the controller does with snapshots.
    public let options: Options
    /// Where it keeps them.
    public let store: any SnapshotStore
    private let context = Mutex<ControllerContext?>(nil)

    /// Creates the controller; add it to a ``Container``.
    ///
    /// - Parameters:
    ///   - options: What to do with snapshots.
    ///   - store: Where to keep them; by default in memory, at most ten thousand.
    public init(options: Options = Options(), store: any SnapshotStore = InMemorySnapshotStore()) {
        self.options = options
        self.store = store
    }

    public func onInit(context: ControllerContext) async throws {
        self.context.withLock { $0 = context }
        let manager = context.communication
        let store = self.store
        // Registered here, so they are in place when the agent joins.
        if self.options.keepsObservedSnapshots {
            let advertises = await manager.observeAdvertise(coreType: .snapshot)
            context.spawn {
                for await advertise in advertises {
                    // Its own Advertises come back too: whether those are kept is `keepsLocalSnapshots`'
                    // call, made when they were taken (as coaty-js documents).
                    guard let snapshot = advertise.object as? Snapshot,
                        snapshot.creatorID != context.identity.objectID
                    else { continue }
                    await Self.keep([snapshot], in: store, context: context)
                }
            }
        }
        if self.options.answersQueries {
            let queries = await manager.observeQuery()
            context.spawn {
                for await query in queries where Self.asksForSnapshots(query) {
                    do {
                        let snapshots = try await store.find(query.objectFilter).filter(query.isTypeCompatible)
                        try query.retrieve(RetrieveEvent(objects: snapshots))
                    } catch {
                        // As in coaty-js, a failed look-up sends no Retrieve; the requester times out.
                        context.logger.warning("\(context.controllerName): cannot answer a Query: \(error)")
                    }
                }
            }
        }
    }

    /// Whether a Query asks for snapshots: by core type, or by the canonical object type.
    static func asksForSnapshots(_ query: QueryEvent) -> Bool {
        query.coreTypes?.contains(.snapshot) == true
            || query.objectTypes?.contains(CoreType.snapshot.objectType) == true
    }

    private static func keep(_ snapshots: [Snapshot], in store: any SnapshotStore, context: ControllerContext) async {
        do {
            try await store.insert(snapshots)
        } catch {
            context.logger.error("\(context.controllerName): cannot store a snapshot: \(error)")
        }
    }

    // MARK: Taking snapshots

    /// Takes a snapshot of `object`: stores it and advertises it as the options say, in that order,
    /// so an agent that sees the Advertise can already query it.
    ///
    /// The snapshot's name is `"<objectType> <name>"`, its parent the object, its creator this agent,
    /// as in coaty-js.
    ///
    /// - Parameters:
    ///   - object: The object; the snapshot holds a copy made through its JSON.
    ///   - timestamp: When, in milliseconds since the Unix epoch; by default now.
    ///   - tags: Tags to find the snapshot by.
    /// - Returns: The snapshot.
    /// - Throws: `CommunicationError` with code `.notRunning` before the container initialised the
    ///   controller; an encoding or decoding error if the object cannot be copied; what the store
    ///   throws; `CommunicationError` if the Advertise cannot be published.
    @discardableResult
    public func takeSnapshot(of object: CoatyObject, timestamp: Double? = nil, tags: [String] = []) async throws
        -> Snapshot
    {
        let context = try self.requireContext()
        let family = context.communication.configuration.objectFamily
        let copy = try object.copied(family: family)
        let snapshot = Snapshot(
            name: "\(object.objectType) \(object.name)",
            object: copy,
            creationTimestamp: timestamp ?? (Date().timeIntervalSince1970 * 1000).rounded(.down),
            creatorID: context.identity.objectID,
            tags: tags
        )
        if self.options.keepsLocalSnapshots { try await self.store.insert([snapshot]) }
        if self.options.advertisesSnapshots { try await context.communication.publish(AdvertiseEvent(snapshot)) }
        return snapshot
    }

    // MARK: Finding snapshots

    /// Queries the snapshots of an object from the historians of all agents, newest first.
    ///
    /// The stream yields each Retrieve's snapshots as they arrive and stays open until the consumer
    /// stops; use `first(timeout:)` when one answer is enough.
    ///
    /// - Throws: `CommunicationError` before initialisation or if the Query cannot be published.
    public func querySnapshots(parentObjectID: ObjectID) async throws -> EventStream<[Snapshot]> {
        let context = try self.requireContext()
        let query = try QueryEvent.byCoreTypes([.snapshot], filter: Self.filter(parentObjectID: parentObjectID))
        return try await context.communication.query(query) { retrieve in
            retrieve.objects.compactMap { $0 as? Snapshot }
        }
    }

    /// The stored snapshots of an object, or of all objects, taken in a time frame, newest first.
    ///
    /// - Parameters:
    ///   - parentObjectID: The snapshotted object; `nil` for all.
    ///   - start: The earliest creation timestamp, inclusive.
    ///   - end: The latest creation timestamp, inclusive.
    /// - Throws: What the store throws.
    public func findSnapshots(parentObjectID: ObjectID?, from start: Double? = nil, to end: Double? = nil)
        async throws -> [Snapshot]
    {
        try await self.store.find(Self.filter(parentObjectID: parentObjectID, from: start, to: end))
    }

    /// The stored snapshots that `filter` selects.
    ///
    /// - Throws: What the store throws.
    public func findSnapshots(_ filter: ObjectFilter) async throws -> [Snapshot] {
        try await self.store.find(filter)
    }

    /// Snapshots of `parentObjectID` (all if `nil`) created from `start` to `end`, newest first.
    static func filter(parentObjectID: ObjectID?, from start: Double? = nil, to end: Double? = nil) -> ObjectFilter {
        var conditions: [FilterCondition] = []
        if let parentObjectID { conditions.append(.init("parentObjectId", .equals(.string(parentObjectID.rawValue)))) }
        if let start { conditions.append(.init("creationTimestamp", .greaterThanOrEqual(.double(start)))) }
        if let end { conditions.append(.init("creationTimestamp", .lessThanOrEqual(.double(end)))) }
        return ObjectFilter(
            conditions: conditions.count == 1 ? .single(conditions[0]) : .and(conditions),
            orderBy: [("creationTimestamp", .descending)]
        )
    }

    private func requireContext() throws -> ControllerContext {
        guard let context = self.context.withLock({ $0 }) else {
            throw CommunicationError(.notRunning, "the controller has not been initialised by a container")
        }
        return context
    }
}
