import Synchronization

/// Remembers decoded objects by object id, so that later decodes reuse the same instance.
///
/// Pass it with ``ObjectDecodingOptions/IdentityTracking/across(_:)``. The map holds its objects
/// **weakly**: an entry disappears when the app no longer holds the object, so the map never grows
/// beyond the objects alive in the app. It is thread-safe and can be shared by concurrent decodes.
///
/// Objects are immutable, so a newer version of an object is a new instance. ``Policy`` decides which
/// instance a later decode returns. Within a single decode, occurrences are always shared. Only
/// occurrences of the same object share an instance: an object with a known id but another object type
/// or class (a `Switch` that a buggy peer gave the id of a `Light`) is returned as decoded and never
/// replaces the entry under ``Policy/keepExisting``.
///
/// The map also remembers the live instances of ``DecoderUpdatable`` types, by type and id, which later
/// decodes update in place (whatever the policy).
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

    private struct WeakInstance {
        weak var instance: (any DecoderUpdatable)?
    }

    private struct State {
        var entries: [ObjectID: WeakEntry] = [:]
        var pruneThreshold = 64
        var instances: [UpdatableInstanceKey: WeakInstance] = [:]
        var instancePruneThreshold = 64
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

    /// The live ``DecoderUpdatable`` instance of `type` remembered for `objectID`, if any.
    public func instance<T: DecoderUpdatable>(of type: T.Type, for objectID: ObjectID) -> T? {
        self.state.withLock {
            $0.instances[UpdatableInstanceKey(type, objectID)]?.instance as? T
        }
    }

    /// Remembers the live ``DecoderUpdatable`` `instance` for `objectID`, replacing an entry of the same type
    /// and id, so that later decodes update it in place.
    public func insert<T: DecoderUpdatable>(_ instance: T, for objectID: ObjectID) {
        self.state.withLock { state in
            state.instances[UpdatableInstanceKey(T.self, objectID)] = WeakInstance(instance: instance)
            if state.instances.count >= state.instancePruneThreshold {
                state.instances = state.instances.filter { $0.value.instance != nil }
                state.instancePruneThreshold = max(64, state.instances.count * 2)
            }
        }
    }

    /// Forgets every object and instance.
    public func removeAll() {
        self.state.withLock { $0 = State() }
    }

    /// The number of live objects remembered (not counting ``DecoderUpdatable`` instances).
    public var count: Int {
        self.state.withLock { $0.entries.values.count { $0.object != nil } }
    }

    /// Returns the instance a decode should use for `decoded`, remembering it as the policy says.
    func canonical(_ decoded: CoatyObject) -> CoatyObject {
        self.state.withLock { state in
            if self.policy == .keepExisting, let existing = state.entries[decoded.objectID]?.object {
                // Another object with this id (another type or class) is returned as decoded and leaves
                // the entry alone.
                return IdentityScope.isSameObject(existing, decoded) ? existing : decoded
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
