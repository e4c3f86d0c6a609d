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

    /// `--broker` repeated names brokers to fail over to, in order; the first replaces the
    /// environment's list, which takes several separated by commas.
    @Test func brokersToFailOverTo() throws {
        let fromEnvironment = try Command(
            parsing: ["discover"],
            environment: ["COATY_BROKER_URL": "mqtt://a:1883,mqtt://b:1883"]
        )
        #expect(Self.connection(of: fromEnvironment)?.brokers == ["mqtt://a:1883", "mqtt://b:1883"])
        let fromCommandLine = try Command(
            parsing: ["discover", "--broker", "mqtt://c:1883", "-b", "ws://d:80/mqtt"],
            environment: ["COATY_BROKER_URL": "mqtt://a:1883,mqtt://b:1883"]
        )
        #expect(Self.connection(of: fromCommandLine)?.brokers == ["mqtt://c:1883", "ws://d:80/mqtt"])
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

/// `coaty broker` takes its credentials from COATY_BROKER_USERNAME and COATY_BROKER_PASSWORD, and its
/// password file, ACL file and anonymous policy from the command line.
struct BrokerAuthOptionsTests {
    @Test func theEnvironmentSetsTheBrokersCredentials() throws {
        let environment = ["COATY_BROKER_USERNAME": "agent", "COATY_BROKER_PASSWORD": "secret"]
        var expected = BrokerOptions()
        expected.username = "agent"
        expected.password = "secret"
        #expect(try Command(parsing: ["broker"], environment: environment) == .broker(expected))
        expected.username = "me"
        #expect(try Command(parsing: ["broker", "-u", "me"], environment: environment) == .broker(expected))
    }

    @Test func credentialsGoTogetherWhereverTheyComeFrom() {
        #expect {
            try Command(parsing: ["broker"], environment: ["COATY_BROKER_PASSWORD": "secret"])
        } throws: { "\($0)".contains("'--username' and '--password' go together") }
        #expect {
            try Command(parsing: ["broker", "--username", "u"], environment: ["COATY_BROKER_USERNAME": "x"])
        } throws: { "\($0)".contains("COATY_BROKER_PASSWORD") }
    }

    @Test func filesAndTheAnonymousPolicyAreParsed() throws {
        var expected = BrokerOptions()
        expected.passwordFile = "/etc/coaty/passwords"
        expected.aclFile = "acl"
        expected.allowAnonymous = true
        let parsed = try Command(
            parsing: [
                "broker", "--password-file", "/etc/coaty/passwords", "--acl-file=acl", "--allow-anonymous", "true",
            ]
        )
        #expect(parsed == .broker(expected))
        expected = BrokerOptions()
        expected.allowAnonymous = false
        #expect(try Command(parsing: ["broker", "--allow-anonymous=false"]) == .broker(expected))
        #expect(try Command(parsing: ["broker"]) == .broker(BrokerOptions()))
    }

    @Test(arguments: [
        (["broker", "--allow-anonymous", "yes"], "'--allow-anonymous' must be true or false, not 'yes'"),
        (["broker", "--password-file"], "missing value for '--password-file'"),
        (["broker", "--acl-file"], "missing value for '--acl-file'"),
    ])
    func badValuesAreUsageErrors(arguments: [String], message: String) {
        #expect {
            try Command(parsing: arguments)
        } throws: { "\($0)".contains(message) }
    }
}
