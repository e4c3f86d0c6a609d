import CoatyCommunication
public import CoatyModel

/// A change in the set of objects an ``ObjectLifecycleController`` tracks.
public struct ObjectLifecycleInfo: Sendable {
    /// Objects seen for the first time (by Resolve or Advertise).
    public var added: [CoatyObject]
    /// Objects advertised again with different content.
    public var changed: [CoatyObject]
    /// Objects deadvertised, or whose parent object (for example their agent) was deadvertised.
    public var removed: [CoatyObject]

    /// Creates a change.
    public init(added: [CoatyObject] = [], changed: [CoatyObject] = [], removed: [CoatyObject] = []) {
        self.added = added
        self.changed = changed
        self.removed = removed
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { self.added.isEmpty && self.changed.isEmpty && self.removed.isEmpty }
}
