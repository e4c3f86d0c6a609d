import CoatyCommunication

/// Whether one IO point is associated, and the streams that follow it: the state behind the IO
/// controllers' `observeAssociation(for:)`, kept under their locks.
struct AssociationObservers {
    /// The state the controller acts on now.
    private(set) var isAssociated = false
    private var listeners: [Int: EventStream<Bool>.Continuation] = [:]

    /// Records the state and yields it to every stream if it changed. Yielding only buffers or resumes
    /// a consumer, never runs a termination handler, so this may be called under a lock.
    mutating func set(_ associated: Bool) {
        guard associated != self.isAssociated else { return }
        self.isAssociated = associated
        for listener in self.listeners.values { listener.yield(associated) }
    }

    /// Adds a stream under `id`; it gets the current state first.
    mutating func add(_ listener: EventStream<Bool>.Continuation, id: Int) {
        listener.yield(self.isAssociated)
        self.listeners[id] = listener
    }

    /// Removes the stream of `id`.
    mutating func remove(_ id: Int) {
        self.listeners[id] = nil
    }

    /// Removes every stream and returns them, to be finished once the lock is released.
    mutating func removeAll() -> [EventStream<Bool>.Continuation] {
        defer { self.listeners = [:] }
        return Array(self.listeners.values)
    }
}
