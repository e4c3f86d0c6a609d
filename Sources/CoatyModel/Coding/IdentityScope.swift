import Synchronization

/// The identity bookkeeping of one decode: strong references for the decode's duration, layered over an
/// optional app-supplied ``ObjectIdentityMap``.
///
/// Objects share an instance only when they are the same object: the same object id, the same object
/// type and the same class. Two objects that share an id but differ in type (a `Light` and a `Switch`
/// that a buggy peer gave one id) stay two instances, so a decode that asks for the `Switch` gets it.
///
/// A part of the decode can be isolated (``isolating(_:)``): objects inside it share instances only
/// with each other, never with the rest of the decode or the app's map. A ``Snapshot`` decodes its
/// object this way, because a snapshot holds one version of an object: several snapshots of the same
/// object (its history) must keep their own versions, not the first one decoded.
final class IdentityScope: Sendable {
    /// The instances of one level of the decode.
    private struct Level {
        /// The first object decoded with each id.
        var byID: [ObjectID: CoatyObject] = [:]
        /// Objects that share an id with an object of another type or class (rare).
        var others: [Key: CoatyObject] = [:]
    }

    private struct Key: Hashable {
        let objectID: ObjectID
        let objectType: String
        let type: ObjectIdentifier
    }

    /// The outer decode's instances first; one more level per isolated part being decoded.
    private let levels = Mutex<[Level]>([Level()])
    /// The ``DecoderUpdatable`` instances of this decode.
    private let instances = Mutex<[UpdatableInstanceKey: any DecoderUpdatable]>([:])
    private let shared: ObjectIdentityMap?

    /// Makes a scope, or returns `nil` when tracking is disabled.
    init?(tracking: ObjectDecodingOptions.IdentityTracking) {
        switch tracking.base {
        case .disabled: return nil
        case .withinDecode: self.shared = nil
        case .across(let map): self.shared = map
        }
    }

    /// Whether `a` and `b` are occurrences of one object, which may share an instance.
    static func isSameObject(_ a: CoatyObject, _ b: CoatyObject) -> Bool {
        ObjectIdentifier(type(of: a)) == ObjectIdentifier(type(of: b)) && a.objectType == b.objectType
    }

    /// Returns the shared instance for `decoded`'s object.
    func canonical(_ decoded: CoatyObject) -> CoatyObject {
        self.levels.withLock { levels in
            let top = levels.count - 1
            if let existing = levels[top].byID[decoded.objectID] {
                if Self.isSameObject(existing, decoded) { return existing }
                let key = Key(
                    objectID: decoded.objectID,
                    objectType: decoded.objectType,
                    type: ObjectIdentifier(type(of: decoded))
                )
                if let other = levels[top].others[key] { return other }
                levels[top].others[key] = decoded
                return decoded
            }
            // Only the outer decode reaches the app's map.
            let result = top == 0 ? self.shared?.canonical(decoded) ?? decoded : decoded
            levels[top].byID[decoded.objectID] = result
            return result
        }
    }

    /// Runs `body`, a part of the decode whose objects share instances only among themselves.
    func isolating<Result>(_ body: () throws -> Result) rethrows -> Result {
        self.levels.withLock { $0.append(Level()) }
        defer { _ = self.levels.withLock { $0.removeLast() } }
        return try body()
    }

    /// The ``DecoderUpdatable`` instance of `type` with `objectID`: one of this decode's, or with
    /// `sharedMap`, the app's map's.
    func instance<T: DecoderUpdatable>(of type: T.Type, for objectID: ObjectID, sharedMap: Bool) -> T? {
        if sharedMap { return self.shared?.instance(of: type, for: objectID) }
        return self.instances.withLock { $0[UpdatableInstanceKey(type, objectID)] as? T }
    }

    /// Remembers `instance` for the rest of this decode and in the app's map.
    func remember<T: DecoderUpdatable>(_ instance: T, for objectID: ObjectID) {
        self.instances.withLock { $0[UpdatableInstanceKey(T.self, objectID)] = instance }
        self.shared?.insert(instance, for: objectID)
    }
}
