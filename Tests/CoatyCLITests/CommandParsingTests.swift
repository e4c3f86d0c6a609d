import Testing

@testable import CoatyCLI

struct CommandParsingTests {
    @Test(arguments: [
        ([], Command.help(subcommand: nil)),
        (["--help"], .help(subcommand: nil)),
        (["-h"], .help(subcommand: nil)),
        (["help"], .help(subcommand: nil)),
        (["help", "broker"], .help(subcommand: "broker")),
        (["monitor", "--help"], .help(subcommand: "monitor")),
        (["call", "x", "-h"], .help(subcommand: "call")),
        (["call", "-h"], .help(subcommand: "call")),
        (["monitor", "--bogus", "--help"], .help(subcommand: "monitor")),
        (["discover", "--timeout", "soon", "-h"], .help(subcommand: "discover")),
        (["--version"], .version),
    ])
    func helpAndVersion(arguments: [String], expected: Command) throws {
        #expect(try Command(parsing: arguments) == expected)
    }

    @Test func brokerDefaultsAndOptions() throws {
        #expect(try Command(parsing: ["broker"]) == .broker(BrokerOptions()))
        var expected = BrokerOptions()
        expected.host = "0.0.0.0"
        expected.port = 0
        expected.webSocketPort = 9883
        expected.maximumPacketSize = 4096
        expected.username = "u"
        expected.password = "p"
        expected.verbose = true
        let parsed = try Command(parsing: [
            "broker", "--host", "0.0.0.0", "--port=0", "--ws-port", "9883", "--max-packet-size", "4096", "-u", "u",
            "--password", "p", "-v",
        ])
        #expect(parsed == .broker(expected))
    }

    /// `-h` and `--help` given as an option's value are that value, not a request for help.
    @Test func helpAsAnOptionValueIsTheValue() throws {
        var broker = BrokerOptions()
        broker.username = "u"
        broker.password = "-h"
        #expect(try Command(parsing: ["broker", "--password", "-h", "-u", "u"]) == .broker(broker))
        var monitor = MonitorOptions()
        monitor.connection.username = "--help"
        monitor.connection.password = "-h"
        #expect(try Command(parsing: ["monitor", "-u", "--help", "-P", "-h"]) == .monitor(monitor))
    }

    @Test func monitorOptions() throws {
        var expected = MonitorOptions()
        expected.connection.broker = "mqtt://localhost:1884"
        expected.connection.namespace = "golden"
        expected.count = 3
        expected.allNamespaces = true
        let parsed = try Command(parsing: [
            "monitor", "-b", "mqtt://localhost:1884", "--namespace=golden", "-c", "3", "-a",
        ])
        #expect(parsed == .monitor(expected))
        expected.json = true
        expected.showSystemTopics = true
        let scripted = try Command(parsing: [
            "monitor", "-b", "mqtt://localhost:1884", "--namespace=golden", "-c", "3", "-a", "--json", "--sys",
        ])
        #expect(scripted == .monitor(expected))
    }

    @Test func callTakesOperationParametersAndTimeout() throws {
        var expected = CallOptions()
        expected.operation = "com.example.add"
        expected.parameters = "[1, 2]"
        expected.timeoutSeconds = 0.5
        #expect(
            try Command(parsing: ["call", "com.example.add", "--params", "[1, 2]", "-t", "0.5s"]) == .call(expected)
        )
        #expect(expected.count == 1)
        expected.count = 3
        #expect(
            try Command(parsing: ["call", "com.example.add", "--params", "[1, 2]", "-t", "0.5s", "-c", "3"])
                == .call(expected)
        )
        #expect(throws: UsageError("'--count' must be a positive number, not '0'", subcommand: "call")) {
            try Command(parsing: ["call", "op", "--count", "0"])
        }
    }

    @Test func routerTakesAContextAndACount() throws {
        var expected = RouterOptions()
        expected.context = "Kitchen"
        expected.count = 2
        expected.connection.namespace = "golden"
        #expect(try Command(parsing: ["router", "Kitchen", "-c", "2", "-n", "golden"]) == .router(expected))
    }

    @Test func discoverTimeout() throws {
        var expected = DiscoverOptions()
        expected.timeoutSeconds = 5
        #expect(try Command(parsing: ["discover", "--timeout", "5"]) == .discover(expected))
    }

    @Test(arguments: [
        (["frobnicate"], "unknown subcommand 'frobnicate'", String?.none),
        (["--verbose"], "unknown option '--verbose'", nil),
        (["help", "nope"], "unknown help topic 'nope'", nil),
        (["broker", "--port"], "missing value for '--port'", "broker"),
        (["broker", "--port", "70000"], "'--port' must be a number from 0 to 65535, not '70000'", "broker"),
        (["broker", "--port", "x"], "'--port' must be a number from 0 to 65535, not 'x'", "broker"),
        (["broker", "--ws-port", "65536"], "'--ws-port' must be a number from 0 to 65535, not '65536'", "broker"),
        (
            ["broker", "--username", "u"],
            "'--username' and '--password' go together (COATY_BROKER_USERNAME and COATY_BROKER_PASSWORD too)",
            "broker"
        ),
        (["broker", "--verbose=yes"], "'--verbose' takes no value", "broker"),
        (["broker", "extra"], "unexpected argument 'extra'", "broker"),
        (
            ["monitor", "--broker", "http://x"],
            "'--broker' takes an address like mqtt://host:port, mqtts://host:port or ws[s]://host:port/path, not 'http://x'",
            "monitor"
        ),
        (
            ["monitor", "-n", "a/b"], "a namespace must be non-empty and must not contain '/', '+', '#' or NUL",
            "monitor"
        ),
        (["monitor", "--count", "0"], "'--count' must be a positive number, not '0'", "monitor"),
        (["call"], "missing operation name", "call"),
        (["call", "a/b"], "an operation name must be non-empty and must not contain '/', '+', '#' or NUL", "call"),
        (["call", "op", "--params", "42"], "'--params' takes a JSON object or array", "call"),
        (["call", "op", "op2"], "unexpected argument 'op2'", "call"),
        (
            ["discover", "--timeout", "-1"], "'--timeout' must be a number of seconds from 0 to 3600, not '-1'",
            "discover"
        ),
        (["router"], "missing IO context name", "router"),
        (
            ["router", "a+b"], "an IO context name must be non-empty and must not contain '/', '+', '#' or NUL",
            "router"
        ),
        (["router", "Kitchen", "--count", "x"], "'--count' must be a positive number, not 'x'", "router"),
        (["router", "Kitchen", "--timeout", "1"], "unknown option '--timeout'", "router"),
    ])
    func usageErrors(arguments: [String], message: String, subcommand: String?) {
        #expect(throws: UsageError(message, subcommand: subcommand)) { try Command(parsing: arguments) }
    }

    /// Command lines that used to be accepted and then failed at run time with status 1 (after a
    /// 5-second connect timeout for the broker URLs) instead of a usage error.
    @Test(arguments: [
        (
            ["discover", "--broker", "mqtt://host:99999"],
            "'--broker' takes an address like mqtt://host:port, mqtts://host:port or ws[s]://host:port/path, not 'mqtt://host:99999'"
        ),
        (
            ["discover", "-b", "mqtt://:1883"],
            "'--broker' takes an address like mqtt://host:port, mqtts://host:port or ws[s]://host:port/path, not 'mqtt://:1883'"
        ),
        (
            ["discover", "-b", "mqtt://"],
            "'--broker' takes an address like mqtt://host:port, mqtts://host:port or ws[s]://host:port/path, not 'mqtt://'"
        ),
        (
            ["discover", "-b", "tcp://h:x"],
            "'--broker' takes an address like mqtt://host:port, mqtts://host:port or ws[s]://host:port/path, not 'tcp://h:x'"
        ),
        (["discover", "-P", "pw"], "'--password' needs '--username' (MQTT 3.1.1 has no password without a user name)"),
    ])
    func runTimeFailuresAreUsageErrors(arguments: [String], message: String) {
        #expect(throws: UsageError(message, subcommand: "discover")) { try Command(parsing: arguments) }
    }

    @Test func invalidParameterJSONIsAUsageError() {
        #expect(throws: UsageError.self) { try Command(parsing: ["call", "op", "--params", "{bad"]) }
    }

    @Test func doubleDashMakesTheRestPositional() throws {
        guard case .call(let options) = try Command(parsing: ["call", "--", "--weird-op"]) else {
            Issue.record("expected a call")
            return
        }
        #expect(options.operation == "--weird-op")
    }

    @Test func everySubcommandHasHelp() {
        for subcommand in Command.subcommands {
            #expect(Help.text(for: subcommand).contains("USAGE: coaty \(subcommand)"))
        }
        #expect(Help.text(for: nil).contains("SUBCOMMANDS"))
    }
}
