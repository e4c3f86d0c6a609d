import CoatyCommunication
public import CoatyModel
import Synchronization

/// A ``SnapshotStore`` in memory that keeps at most `capacity` snapshots, dropping the oldest stored
/// first.
///
/// The bound matters because a historian that persists observed snapshots stores what any agent
/// advertises.
public final class InMemorySnapshotStore: SnapshotStore {
    /// The most snapshots kept.
    public let capacity: Int
    private let state = Mutex(State())

    private struct State {
        /// In the order stored; `order` holds the ids oldest first, for dropping.
        var snapshots: [ObjectID: Snapshot] = [:]
        var order: [ObjectID] = []
        var start = 0
    }

    /// Creates an empty store.
    ///
    /// - Parameter capacity: The most snapshots kept (at least 1); the default keeps ten thousand.
    public init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    /// The number of stored snapshots.
    public var count: Int { self.state.withLock { $0.snapshots.count } }

    public func insert(_ snapshots: [Snapshot]) {
        self.state.withLock { state in
            for snapshot in snapshots {
                if state.snapshots.updateValue(snapshot, forKey: snapshot.objectID) == nil {
                    state.order.append(snapshot.objectID)
                }
                while state.snapshots.count > self.capacity {
                    state.snapshots.removeValue(forKey: state.order[state.start])
                    state.start += 1
                }
            }
            // Compact the order once its dropped prefix is as long as what is left.
            if state.start > 0 && state.start >= state.order.count / 2 {
                state.order.removeFirst(state.start)
                state.start = 0
            }
        }
    }

    public func find(_ filter: ObjectFilter) -> [Snapshot] {
        let stored = self.state.withLock { state in state.order[state.start...].compactMap { state.snapshots[$0] } }
        return filter.apply(to: stored)
    }
}
