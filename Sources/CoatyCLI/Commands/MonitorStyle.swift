import CoatyCommunication

/// The colours of `coaty monitor`'s lines, and whether to use them.
enum MonitorStyle {
    /// Whether to colour the output: only on a terminal, and not when `NO_COLOR` is set to a non-empty
    /// value (no-color.org) or `TERM` is `dumb`. Pure, so the decision is tested without a terminal.
    static func usesColour(isTerminal: Bool, environment: [String: String]) -> Bool {
        guard isTerminal else { return false }
        if let noColour = environment["NO_COLOR"], !noColour.isEmpty { return false }
        return environment["TERM"] != "dumb"
    }

    /// The environment variables ``usesColour(isTerminal:environment:)`` reads.
    static let environmentVariables = ["NO_COLOR", "TERM"]

    /// An ANSI text attribute.
    enum Colour: String {
        case dim = "2"
        case red = "31"
        case green = "32"
        case yellow = "33"
        case blue = "34"
        case magenta = "35"
        case cyan = "36"

        /// `text` in this colour, then back to the default.
        func apply(to text: String) -> String {
            "\u{1B}[\(self.rawValue)m\(text)\u{1B}[0m"
        }
    }

    /// The event column's colour: announcements green, their withdrawal red, requests cyan, responses
    /// blue, IO routing magenta.
    static func colour(of code: EventCode) -> Colour {
        switch code {
        case .advertise, .channel: .green
        case .deadvertise: .red
        case .discover, .query, .update, .call: .cyan
        case .resolve, .retrieve, .complete, .return: .blue
        case .associate, .ioValue: .magenta
        }
    }
}
