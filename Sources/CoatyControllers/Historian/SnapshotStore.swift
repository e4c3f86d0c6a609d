import CoatyCommunication
public import CoatyModel

/// Where a ``HistorianController`` keeps snapshots: coaty-js keeps them in a database collection.
///
/// Implement it over a database to keep snapshots across runs; ``InMemorySnapshotStore`` keeps a
/// bounded number in memory.
public protocol SnapshotStore: Sendable {
    /// Adds snapshots. A snapshot whose object id is already stored replaces the stored one.
    func insert(_ snapshots: [Snapshot]) async throws

    /// The stored snapshots that `filter` selects, ordered, skipped and taken as
    /// `ObjectFilter.apply(to:)` does.
    func find(_ filter: ObjectFilter) async throws -> [Snapshot]
}
