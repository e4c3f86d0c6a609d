import Synchronization

/// Remembers decoded objects by object id, so that later decodes reuse the same instance.
///
/// Pass it with ``ObjectDecodingOptions/IdentityTracking/across(_:)``. The map holds its objects
/// **weakly**: an entry disappears when the app no longer holds the object, so the map never grows
/// beyond the objects alive in the app. It is thread-safe and can be shared by concurrent decodes.
///
/// Objects are immutable, so a newer version of an object is a new instance. ``Policy`` decides which
/// instance a later decode returns. Within a single decode, occurrences are always shared.
public final class ObjectIdentityMap: Sendable {
    /// Which instance a decode returns for an object id the map already knows.
    public enum Policy: Sendable {
        /// Keep the first instance; later decodes return it and drop the newly decoded copy.
        case keepExisting
        /// Later decodes replace the entry with the newly decoded instance.
        case replaceWithNewer
    }

    private struct WeakEntry {
        weak var object: CoatyObject?
    }

    private struct State {
        var entries: [ObjectID: WeakEntry] = [:]
        var pruneThreshold = 64
    }

    /// The policy for ids the map already knows.
    public let policy: Policy
    private let state = Mutex(State())

    /// Creates an empty map.
    ///
    /// - Parameter policy: Which instance later decodes return. Defaults to ``Policy/keepExisting``.
    public init(policy: Policy = .keepExisting) {
        self.policy = policy
    }

    /// The live object remembered for `objectID`, if any.
    public func object(for objectID: ObjectID) -> CoatyObject? {
        self.state.withLock { $0.entries[objectID]?.object }
    }

    /// Remembers `object`, replacing an entry with the same id.
    public func insert(_ object: CoatyObject) {
        self.state.withLock { Self.store(object, in: &$0) }
    }

    /// Forgets the object with `objectID`.
    public func removeObject(for objectID: ObjectID) {
        self.state.withLock { _ = $0.entries.removeValue(forKey: objectID) }
    }

    /// Forgets every object.
    public func removeAll() {
        self.state.withLock { $0 = State() }
    }

    /// The number of live objects remembered.
    public var count: Int {
        self.state.withLock { $0.entries.values.count { $0.object != nil } }
    }

    /// Returns the instance a decode should use for `decoded`, remembering it as the policy says.
    func canonical(_ decoded: CoatyObject) -> CoatyObject {
        self.state.withLock { state in
            if self.policy == .keepExisting, let existing = state.entries[decoded.objectID]?.object {
                return existing
            }
            Self.store(decoded, in: &state)
            return decoded
        }
    }

    private static func store(_ object: CoatyObject, in state: inout State) {
        state.entries[object.objectID] = WeakEntry(object: object)
        if state.entries.count >= state.pruneThreshold {
            state.entries = state.entries.filter { $0.value.object != nil }
            state.pruneThreshold = max(64, state.entries.count * 2)
        }
    }
}
