/// Walks a command line's arguments: options (`--name value`, `--name=value`, flags) and positionals.
///
/// Parsing is pure: it never touches the process, so every rule is unit-tested without spawning one.
struct ArgumentScanner {
    private var arguments: [String]
    private var index = 0
    let subcommand: String

    init(_ arguments: some Collection<String>, subcommand: String) {
        self.arguments = Array(arguments)
        self.subcommand = subcommand
    }

    /// The error for an option the subcommand does not have, spelled as it was given.
    func unknownOption(_ name: String) -> UsageError {
        UsageError("unknown option '\(name.count == 1 ? "-" : "--")\(name)'", subcommand: self.subcommand)
    }

    /// The error for a positional argument the subcommand does not take.
    func unexpectedArgument(_ value: String) -> UsageError {
        UsageError("unexpected argument '\(value)'", subcommand: self.subcommand)
    }

    enum Token: Equatable {
        /// `--name` or `-n`, with an inline value for `--name=value`.
        case option(name: String, inlineValue: String?)
        case positional(String)
    }

    /// The next token, or nil at the end. After `--`, everything is positional.
    mutating func next() -> Token? {
        guard self.index < self.arguments.count else { return nil }
        let argument = self.arguments[self.index]
        self.index += 1
        if argument == "--" {
            self.arguments = Array(self.arguments[self.index...].map { "\u{0}" + $0 })
            self.index = 0
            return self.next()
        }
        if argument.hasPrefix("\u{0}") { return .positional(String(argument.dropFirst())) }
        if argument.hasPrefix("--"), argument.count > 2 {
            let body = argument.dropFirst(2)
            if let equals = body.firstIndex(of: "=") {
                return .option(name: String(body[..<equals]), inlineValue: String(body[body.index(after: equals)...]))
            }
            return .option(name: String(body), inlineValue: nil)
        }
        if argument.hasPrefix("-"), argument.count == 2, argument != "--" {
            return .option(name: String(argument.dropFirst()), inlineValue: nil)
        }
        return .positional(argument)
    }

    /// The value of an option: its inline value, or the next argument.
    mutating func value(for name: String, inline: String?) throws(UsageError) -> String {
        if let inline { return inline }
        guard self.index < self.arguments.count else {
            throw UsageError("missing value for '--\(name)'", subcommand: self.subcommand)
        }
        let value = self.arguments[self.index]
        self.index += 1
        return value.hasPrefix("\u{0}") ? String(value.dropFirst()) : value
    }

    /// Rejects an inline value given to a flag (`--verbose=yes`).
    func flag(_ name: String, inline: String?) throws(UsageError) -> Bool {
        if inline != nil { throw UsageError("'--\(name)' takes no value", subcommand: self.subcommand) }
        return true
    }
}
