/// Receives log entries from a ``CoatyLogger``.
///
/// Implement it to send the framework's log to another logging system: an entry carries the level,
/// message, metadata, the logger's label and the source location (file, function, line).
public protocol CoatyLogHandler: Sendable {
    /// Handles one entry. Called synchronously on the logging thread; must not block for long.
    func log(_ entry: CoatyLogEntry)
}

/// A handler that drops every entry.
public struct DiscardingLogHandler: CoatyLogHandler {
    /// Creates the handler.
    public init() {}

    public func log(_ entry: CoatyLogEntry) {}
}
