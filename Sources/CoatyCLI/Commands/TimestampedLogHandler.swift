import CoatyCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Writes each entry to standard error as one line that starts with the time it was logged, in ISO
/// 8601 UTC with milliseconds (`2026-11-28T00:10:00.123Z notice coaty.broker: …`), as a server's log is
/// read: `coaty broker` logs with it.
struct TimestampedLogHandler: CoatyLogHandler {
    func log(_ entry: CoatyLogEntry) {
        StandardStream.error.write(Self.line(for: entry, at: Date()) + "\n")
    }

    /// The line for `entry` logged at `date`.
    static func line(for entry: CoatyLogEntry, at date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) + " " + entry.formatted
    }
}
