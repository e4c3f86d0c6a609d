/// A parsed `coaty` command line.
enum Command: Equatable {
    /// `coaty broker`: run the embedded MQTT broker.
    case broker(BrokerOptions)
    /// `coaty monitor`: print every Coaty event in a namespace.
    case monitor(MonitorOptions)
    /// `coaty discover`: list the agents present.
    case discover(DiscoverOptions)
    /// `coaty call`: call a remote operation and print the returns.
    case call(CallOptions)
    /// `coaty router`: route the IO values of an IO context.
    case router(RouterOptions)
    /// `--help`, `help [subcommand]`, or `<subcommand> --help`.
    case help(subcommand: String?)
    /// `--version`.
    case version

    /// The subcommands, in the order the help lists them.
    static let subcommands = ["broker", "monitor", "discover", "call", "router"]

    /// Parses the arguments after the program name.
    ///
    /// - Parameter environment: The process environment; the client subcommands take their
    ///   connection settings from `COATY_BROKER_URL`, `COATY_NAMESPACE`, `COATY_USERNAME` and
    ///   `COATY_PASSWORD` where the command line does not give them, and `coaty broker` its credentials
    ///   from `COATY_BROKER_USERNAME` and `COATY_BROKER_PASSWORD`.
    /// - Throws: ``UsageError`` describing the first problem found.
    init(parsing arguments: some Collection<String>, environment: [String: String] = [:]) throws(UsageError) {
        guard let first = arguments.first else {
            self = .help(subcommand: nil)
            return
        }
        let rest = arguments.dropFirst()
        switch first {
        case "-h", "--help":
            self = .help(subcommand: nil)
        case "--version":
            self = .version
        case "help":
            guard let topic = rest.first else {
                self = .help(subcommand: nil)
                return
            }
            guard Self.subcommands.contains(topic), rest.count == 1 else {
                throw UsageError("unknown help topic '\(rest.joined(separator: " "))'")
            }
            self = .help(subcommand: topic)
        case "broker", "monitor", "discover", "call", "router":
            // `-h` or `--help` shows the subcommand's help wherever it stands, except as an option's
            // value (`--password -h`): a command line that parses took every `-h` as a value, since
            // no subcommand has an option of that name, and one that fails shows the help if it asks.
            do {
                switch first {
                case "broker": self = .broker(try BrokerOptions(parsing: rest, environment: environment))
                case "monitor": self = .monitor(try MonitorOptions(parsing: rest, environment: environment))
                case "discover": self = .discover(try DiscoverOptions(parsing: rest, environment: environment))
                case "router": self = .router(try RouterOptions(parsing: rest, environment: environment))
                default: self = .call(try CallOptions(parsing: rest, environment: environment))
                }
            } catch {
                guard rest.contains(where: { $0 == "-h" || $0 == "--help" }) else { throw error }
                self = .help(subcommand: first)
            }
        default:
            if first.hasPrefix("-") { throw UsageError("unknown option '\(first)'") }
            throw UsageError("unknown subcommand '\(first)'")
        }
    }
}
