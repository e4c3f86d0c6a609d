/// The severity of a ``Log`` entry; a number (10…50) on the wire.
public enum LogLevel: Int, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// Debugging detail.
    case debug = 10
    /// Information.
    case info = 20
    /// A warning.
    case warning = 30
    /// An error.
    case error = 40
    /// A fatal error.
    case fatal = 50

    /// Orders by severity.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
