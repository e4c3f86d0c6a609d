import CoatyCore

/// The tool's output: unbuffered, so each line reaches a pipe at once.
enum Console {
    /// Writes `text` and a newline to standard output.
    static func line(_ text: String) {
        StandardStream.output.write(text + "\n")
    }

    /// Writes `text` to standard error as is.
    static func error(_ text: String) {
        StandardStream.error.write(text)
    }
}
