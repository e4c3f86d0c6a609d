/// A handler that writes each entry as one line to standard error, unbuffered.
public struct StandardErrorLogHandler: CoatyLogHandler {
    private let write: @Sendable (String) -> Void

    /// Creates the handler.
    public init() {
        self.write = { StandardStream.error.write($0) }
    }

    /// A handler that hands each line (with its newline) to `write` instead, for tests.
    package init(write: @escaping @Sendable (String) -> Void) {
        self.write = write
    }

    public func log(_ entry: CoatyLogEntry) {
        self.write(entry.formatted + "\n")
    }
}
