/// A small structured logger with swift-log's call shape, so that moving to swift-log later is mechanical.
///
/// Components take a `Logger` through their configuration and never `print`. The default logger
/// discards everything; ``Logger/init(label:level:handler:)`` with a ``StreamLogHandler`` writes to
/// standard error, and ``InMemoryLogHandler`` collects entries for tests.
public struct Logger: Sendable {
    /// The severity of a log entry, in increasing order.
    public enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        case trace, debug, info, notice, warning, error, critical

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        public var description: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            case .critical: "critical"
            }
        }
    }

    /// Key-value context attached to an entry.
    public typealias Metadata = [String: String]

    /// The name of the component that logs, for example `"coaty.mqtt"`.
    public var label: String
    /// Entries below this level are not built and not handed to the handler.
    public var level: Level
    /// Where entries go.
    public var handler: any LogHandler

    /// Creates a logger.
    ///
    /// - Parameters:
    ///   - label: The component name.
    ///   - level: The lowest level that is logged. Defaults to `.info`.
    ///   - handler: Where entries go. Defaults to a handler that discards everything.
    public init(label: String, level: Level = .info, handler: any LogHandler = DiscardingLogHandler()) {
        self.label = label
        self.level = level
        self.handler = handler
    }

    /// A logger that discards every entry.
    public static let disabled = Logger(label: "disabled", level: .critical)

    /// Logs a message built lazily, only when `level` is enabled.
    @inlinable
    public func log(
        level: Level,
        _ message: @autoclosure () -> String,
        metadata: @autoclosure () -> Metadata = [:]
    ) {
        guard level >= self.level else { return }
        self.handler.log(LogEntry(label: self.label, level: level, message: message(), metadata: metadata()))
    }

    /// Logs at `.trace`.
    @inlinable
    public func trace(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        self.log(level: .trace, message(), metadata: metadata())
    }

    /// Logs at `.debug`.
    @inlinable
    public func debug(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        self.log(level: .debug, message(), metadata: metadata())
    }

    /// Logs at `.info`.
    @inlinable
    public func info(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        self.log(level: .info, message(), metadata: metadata())
    }

    /// Logs at `.notice`.
    @inlinable
    public func notice(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        self.log(level: .notice, message(), metadata: metadata())
    }

    /// Logs at `.warning`.
    @inlinable
    public func warning(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        self.log(level: .warning, message(), metadata: metadata())
    }

    /// Logs at `.error`.
    @inlinable
    public func error(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        self.log(level: .error, message(), metadata: metadata())
    }
}

/// One log entry as handed to a ``LogHandler``.
public struct LogEntry: Sendable {
    /// The logger's label.
    public var label: String
    /// The entry's severity.
    public var level: Logger.Level
    /// The message.
    public var message: String
    /// Structured context.
    public var metadata: Logger.Metadata

    /// Creates an entry.
    public init(label: String, level: Logger.Level, message: String, metadata: Logger.Metadata) {
        self.label = label
        self.level = level
        self.message = message
        self.metadata = metadata
    }

    /// The entry as one line: `level label: message key=value …`, metadata sorted by key.
    public var formatted: String {
        var line = "\(self.level) \(self.label): \(self.message)"
        for key in self.metadata.keys.sorted() {
            line += " \(key)=\(self.metadata[key]!)"
        }
        return line
    }
}

/// Receives log entries from a ``Logger``.
public protocol LogHandler: Sendable {
    /// Handles one entry. Called synchronously on the logging thread; must not block for long.
    func log(_ entry: LogEntry)
}

/// A handler that drops every entry.
public struct DiscardingLogHandler: LogHandler {
    /// Creates the handler.
    public init() {}

    public func log(_ entry: LogEntry) {}
}
