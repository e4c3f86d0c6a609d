/// A handler that writes each entry as one line to standard error, unbuffered.
public struct StreamLogHandler: LogHandler {
    /// Creates the handler.
    public init() {}

    public func log(_ entry: LogEntry) {
        StandardStream.error.write(entry.formatted + "\n")
    }
}
