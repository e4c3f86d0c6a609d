#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `coaty` command-line tool. `main` only parses, dispatches and maps errors to exit codes.
@main
enum CoatyCLI {
    /// The environment variables the options read (``ConnectionOptions/environmentVariables`` and
    /// ``BrokerOptions/environmentVariables``) and those that decide on colour
    /// (``MonitorStyle/environmentVariables``).
    static var environment: [String: String] {
        var environment: [String: String] = [:]
        let names =
            Array(ConnectionOptions.environmentVariables.values) + BrokerOptions.environmentVariables.values
            + MonitorStyle.environmentVariables
        for name in names {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return environment
    }

    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        let command: Command
        do {
            command = try Command(parsing: arguments, environment: Self.environment)
        } catch {
            Console.error("\(error)\n\n\(Help.text(for: error.subcommand))\n")
            exit(64)  // EX_USAGE
        }
        switch command {
        case .help(let subcommand):
            Console.line(Help.text(for: subcommand))
        case .version:
            Console.line(Help.version)
        default:
            do {
                try await CommandRunner.run(command)
            } catch is CancellationError {
                exit(0)
            } catch {
                Console.error("error: \(error)\n")
                exit(1)
            }
        }
    }
}
