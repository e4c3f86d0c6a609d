import Testing

@testable import CoatyCLI

/// The client subcommands take their connection settings from COATY_* variables where the command line
/// does not give them.
struct EnvironmentOptionsTests {
    static let environment = [
        "COATY_BROKER_URL": "mqtt://broker.example:1884", "COATY_NAMESPACE": "plant",
        "COATY_USERNAME": "agent", "COATY_PASSWORD": "secret",
    ]

    @Test(arguments: [["monitor"], ["discover"], ["call", "op"], ["router", "Home"]])
    func theEnvironmentSetsTheConnection(arguments: [String]) throws {
        let command = try Command(parsing: arguments, environment: Self.environment)
        let connection = try #require(Self.connection(of: command))
        #expect(connection.broker == "mqtt://broker.example:1884")
        #expect(connection.namespace == "plant")
        #expect(connection.username == "agent")
        #expect(connection.password == "secret")
    }

    @Test func theCommandLineWins() throws {
        let command = try Command(
            parsing: ["discover", "--broker", "ws://127.0.0.1:9001/mqtt", "-n", "lab", "-u", "me"],
            environment: Self.environment
        )
        let connection = try #require(Self.connection(of: command))
        #expect(connection.broker == "ws://127.0.0.1:9001/mqtt")
        #expect(connection.namespace == "lab")
        #expect(connection.username == "me")
        #expect(connection.password == "secret")
    }

    @Test func emptyVariablesAreUnset() throws {
        let command = try Command(parsing: ["monitor"], environment: ["COATY_BROKER_URL": "", "COATY_NAMESPACE": ""])
        #expect(command == .monitor(MonitorOptions()))
    }

    @Test func theBrokerIgnoresTheClientVariables() throws {
        #expect(try Command(parsing: ["broker"], environment: Self.environment) == .broker(BrokerOptions()))
    }

    @Test(arguments: [
        (["COATY_BROKER_URL": "htp:/x"], "COATY_BROKER_URL takes an address"),
        (["COATY_BROKER_URL": "mqtt://host:99999"], "COATY_BROKER_URL takes an address"),
        (["COATY_NAMESPACE": "a/b"], "COATY_NAMESPACE (a namespace) must be non-empty"),
        (["COATY_PASSWORD": "p"], "'--password' needs '--username'"),
    ])
    func badValuesAreUsageErrorsNamingTheVariable(environment: [String: String], message: String) {
        #expect {
            try Command(parsing: ["discover"], environment: environment)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    private static func connection(of command: Command) -> ConnectionOptions? {
        switch command {
        case .monitor(let options): options.connection
        case .discover(let options): options.connection
        case .call(let options): options.connection
        case .router(let options): options.connection
        default: nil
        }
    }
}
