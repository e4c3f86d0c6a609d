/// The state of a ``CoatyTask``; a number on the wire.
public enum TaskStatus: Int, Sendable, Hashable, Codable, CaseIterable {
    /// Not started yet.
    case pending = 0
    /// Being worked on.
    case inProgress = 1
    /// Finished.
    case done = 2
    /// Cannot progress.
    case blocked = 3
    /// Abandoned.
    case cancelled = 4
    /// A request for someone to take on the task.
    case request = 5
    /// A withdrawn request.
    case requestCancelled = 6
}
