import Synchronization

/// The identity bookkeeping of one decode: strong references for the decode's duration, layered over an
/// optional app-supplied ``ObjectIdentityMap``.
final class IdentityScope: Sendable {
    private let local = Mutex<[ObjectID: CoatyObject]>([:])
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
        self.local.withLock { local in
            if let existing = local[decoded.objectID] { return existing }
            let result = self.shared?.canonical(decoded) ?? decoded
            local[decoded.objectID] = result
            return result
        }
    }
}
