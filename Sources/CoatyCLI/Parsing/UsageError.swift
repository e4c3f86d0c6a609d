/// A command line that cannot be run as written. The tool prints it to standard error with the
/// subcommand's usage and exits with code 64 (`EX_USAGE`).
struct UsageError: Error, Equatable, CustomStringConvertible {
    /// What is wrong, for a human.
    var message: String
    /// The subcommand whose usage to show, or nil for the top level.
    var subcommand: String?

    init(_ message: String, subcommand: String? = nil) {
        self.message = message
        self.subcommand = subcommand
    }

    var description: String { "error: \(self.message)" }
}
