import CoatyCore

/// Runs a parsed command.
enum CommandRunner {
    static func run(_ command: Command) async throws {
        switch command {
        case .help, .version:
            return
        case .broker(let options):
            try await BrokerCommand.run(options)
        case .monitor(let options):
            let transport = try TransportFactory.make(options.connection)
            try await Signals.runUntilInterrupted {
                let usesColour = MonitorStyle.usesColour(
                    isTerminal: StandardStream.output.isTerminal,
                    environment: CoatyCLI.environment
                )
                try await MonitorCommand.run(options, transport: transport, usesColour: usesColour) { Console.line($0) }
            }
        case .discover(let options):
            let transport = try TransportFactory.make(options.connection)
            try await Signals.runUntilInterrupted {
                _ = try await DiscoverCommand.run(options, transport: transport) { Console.line($0) }
            }
        case .call(let options):
            let transport = try TransportFactory.make(options.connection)
            try await Signals.runUntilInterrupted {
                let returns = try await CallCommand.run(options, transport: transport) { Console.line($0) }
                if let failure = CallCommand.failure(returns, options: options) { throw failure }
            }
        case .router(let options):
            let transport = try TransportFactory.make(options.connection)
            try await Signals.runUntilInterrupted {
                try await RouterCommand.run(options, transport: transport) { Console.line($0) }
            }
        }
    }
}

/// A failure while running a command (not a usage error).
struct CLIError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
