/// A handler that writes each entry as one line to standard error, unbuffered.
public struct StandardErrorLogHandler: CoatyLogHandler {
    /// Creates the handler.
    public init() {}

    public func log(_ entry: CoatyLogEntry) {
        StandardStream.error.write(entry.formatted + "\n")
    }
}
