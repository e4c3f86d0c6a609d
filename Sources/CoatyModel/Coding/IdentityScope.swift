import Synchronization

/// The identity bookkeeping of one decode: strong references for the decode's duration, layered over an
/// optional app-supplied ``ObjectIdentityMap``.
///
/// A part of the decode can be isolated (``isolating(_:)``): objects inside it share instances only
/// with each other, never with the rest of the decode or the app's map. A ``Snapshot`` decodes its
/// object this way, because a snapshot holds one version of an object: several snapshots of the same
/// object (its history) must keep their own versions, not the first one decoded.
final class IdentityScope: Sendable {
    /// The outer decode's instances first; one more level per isolated part being decoded.
    private let levels = Mutex<[[ObjectID: CoatyObject]]>([[:]])
    private let shared: ObjectIdentityMap?

    /// Makes a scope, or returns `nil` when tracking is disabled.
    init?(tracking: ObjectDecodingOptions.IdentityTracking) {
        switch tracking.base {
        case .disabled: return nil
        case .withinDecode: self.shared = nil
        case .across(let map): self.shared = map
        }
    }

    /// Returns the shared instance for `decoded`'s object id.
    func canonical(_ decoded: CoatyObject) -> CoatyObject {
        self.levels.withLock { levels in
            let top = levels.count - 1
            if let existing = levels[top][decoded.objectID] { return existing }
            // Only the outer decode reaches the app's map.
            let result = top == 0 ? self.shared?.canonical(decoded) ?? decoded : decoded
            levels[top][decoded.objectID] = result
            return result
        }
    }

    /// Runs `body`, a part of the decode whose objects share instances only among themselves.
    func isolating<Result>(_ body: () throws -> Result) rethrows -> Result {
        self.levels.withLock { $0.append([:]) }
        defer { _ = self.levels.withLock { $0.removeLast() } }
        return try body()
    }
}
