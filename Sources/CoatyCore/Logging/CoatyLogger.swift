/// A small structured logger for the framework's components.
///
/// Components take a `CoatyLogger` through their configuration and never `print`. The names differ
/// from swift-log's (`Logger`, `LogHandler`), so a file can import both; Docs/Logging.md shows a
/// bridge of a few lines that hands every entry to a swift-log `Logger`.
///
/// A bare logger discards everything (an agent's default is ``warningsToStandardError``); a
/// ``StandardErrorLogHandler`` writes to standard error, and ``InMemoryLogHandler`` collects entries
/// for tests.
public struct CoatyLogger: Sendable {
    /// The severity of a log entry, in increasing order (the same levels as swift-log).
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
    public var handler: any CoatyLogHandler

    /// Creates a logger.
    ///
    /// - Parameters:
    ///   - label: The component name.
    ///   - level: The lowest level that is logged. Defaults to `.info`.
    ///   - handler: Where entries go. Defaults to a handler that discards everything.
    public init(label: String, level: Level = .info, handler: any CoatyLogHandler = DiscardingLogHandler()) {
        self.label = label
        self.level = level
        self.handler = handler
    }

    /// A logger that discards every entry.
    public static let disabled = CoatyLogger(label: "disabled", level: .critical)

    /// The logger of an agent that configured none: warnings and errors, one line each, to standard
    /// error, labelled `coaty`. A broker that cannot be reached is then never a silent hang. Silence
    /// it with ``disabled``.
    public static let warningsToStandardError = CoatyLogger(
        label: "coaty",
        level: .warning,
        handler: StandardErrorLogHandler()
    )

    /// This logger with another label, for a component that logs on behalf of the one that owns it
    /// (the same level and handler).
    public func labelled(_ label: String) -> CoatyLogger {
        var logger = self
        logger.label = label
        return logger
    }

    /// Logs a message built lazily, only when `level` is enabled.
    @inlinable
    public func log(
        level: Level,
        _ message: @autoclosure () -> String,
        metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID,
        function: String = #function,
        line: UInt = #line
    ) {
        guard level >= self.level else { return }
        self.handler.log(
            CoatyLogEntry(
                label: self.label,
                level: level,
                message: message(),
                metadata: metadata(),
                source: .init(file: file, function: function, line: line)
            )
        )
    }

    /// Logs at `.trace`.
    @inlinable
    public func trace(
        _ message: @autoclosure () -> String,
        metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID,
        function: String = #function,
        line: UInt = #line
    ) {
        self.log(level: .trace, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs at `.debug`.
    @inlinable
    public func debug(
        _ message: @autoclosure () -> String,
        metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID,
        function: String = #function,
        line: UInt = #line
    ) {
        self.log(level: .debug, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs at `.info`.
    @inlinable
    public func info(
        _ message: @autoclosure () -> String,
        metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID,
        function: String = #function,
        line: UInt = #line
    ) {
        self.log(level: .info, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs at `.notice`.
    @inlinable
    public func notice(
        _ message: @autoclosure () -> String,
        metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID,
        function: String = #function,
        line: UInt = #line
    ) {
        self.log(level: .notice, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs at `.warning`.
    @inlinable
    public func warning(
        _ message: @autoclosure () -> String,
        metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID,
        function: String = #function,
        line: UInt = #line
    ) {
        self.log(level: .warning, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs at `.error`.
    @inlinable
    public func error(
        _ message: @autoclosure () -> String,
        metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID,
        function: String = #function,
        line: UInt = #line
    ) {
        self.log(level: .error, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs at `.critical`.
    @inlinable
    public func critical(
        _ message: @autoclosure () -> String,
        metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID,
        function: String = #function,
        line: UInt = #line
    ) {
        self.log(level: .critical, message(), metadata: metadata(), file: file, function: function, line: line)
    }
}
