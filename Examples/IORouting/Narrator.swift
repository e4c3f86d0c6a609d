import CoatyCore

/// Tells what happens in the example, one line per event: the time, the agent, what happened, and the
/// details. Lines go to standard output, or to a closure so that tests can read them.
final class Narrator: Sendable {
    private let output: @Sendable (String) -> Void

    init(output: @escaping @Sendable (String) -> Void = { StandardStream.output.write($0 + "\n") }) {
        self.output = output
    }

    /// One event line.
    func event(_ agent: String, _ what: String, _ detail: String) {
        self.output("\(StandardStream.timeOfDay())  \(column(agent, 12)) \(column(what, 11)) \(detail)")
    }

    /// A line of its own: headings and the summary.
    func say(_ text: String) {
        self.output(text)
    }
}

/// `text` padded with spaces to `width` characters, so the columns line up.
private func column(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
}
