import CoatyCommunication
import CoatyMQTT
import CoatyModel

/// Options of `coaty broker`.
struct BrokerOptions: Equatable {
    var host = "127.0.0.1"
    var port = 1883
    /// The port of the WebSocket listener (`--ws-port`), or `nil` for none.
    var webSocketPort: Int?
    var maximumPacketSize: Int?
    /// The single user name and password clients may present (`--username`/`--password`, or the
    /// environment, see ``environmentVariables``).
    var username: String?
    var password: String?
    /// A mosquitto password file (`--password-file`).
    var passwordFile: String?
    /// A mosquitto ACL file (`--acl-file`).
    var aclFile: String?
    /// `--allow-anonymous true|false`; `nil` for the broker's default (anonymous clients are allowed
    /// unless a password file or credentials are given).
    var allowAnonymous: Bool?
    /// The TLS listener's options.
    var tls = BrokerTLSOptions()
    /// The data directory for persistence (`--data-dir`), or `nil` to keep state in memory only.
    var dataDirectory: String?
    /// How often persistence syncs, in seconds (`--sync-interval`, which needs `--data-dir`).
    var syncIntervalSeconds = 1.0
    var verbose = false

    /// The environment variables read, by the option they stand in for: the credentials, kept out of
    /// the process list, where `--password` would show.
    static let environmentVariables = ["username": "COATY_BROKER_USERNAME", "password": "COATY_BROKER_PASSWORD"]

    init() {}

    /// Parses the options after `broker`; `--username` and `--password` default to the
    /// ``environmentVariables``, and the command line wins.
    init(parsing arguments: some Collection<String>, environment: [String: String] = [:]) throws(UsageError) {
        func value(_ option: String) -> String? {
            guard let name = Self.environmentVariables[option], let value = environment[name], !value.isEmpty else {
                return nil
            }
            return value
        }
        self.username = value("username")
        self.password = value("password")
        var scanner = ArgumentScanner(arguments, subcommand: "broker")
        var syncIntervalGiven = false
        while let token = scanner.next() {
            switch token {
            case .option("host", let inline): self.host = try scanner.value(for: "host", inline: inline)
            case .option("port", let inline), .option("p", let inline):
                self.port = try parsePort(try scanner.value(for: "port", inline: inline), subcommand: "broker")
            case .option("ws-port", let inline):
                let text = try scanner.value(for: "ws-port", inline: inline)
                self.webSocketPort = try parsePort(text, option: "ws-port", subcommand: "broker")
            case .option("max-packet-size", let inline):
                let text = try scanner.value(for: "max-packet-size", inline: inline)
                guard let size = Int(text), size >= 16, size <= 268_435_455 else {
                    throw UsageError(
                        "'--max-packet-size' must be a byte count from 16 to 268435455, not '\(text)'",
                        subcommand: "broker"
                    )
                }
                self.maximumPacketSize = size
            case .option("username", let inline), .option("u", let inline):
                self.username = try scanner.value(for: "username", inline: inline)
            case .option("password", let inline), .option("P", let inline):
                self.password = try scanner.value(for: "password", inline: inline)
            case .option("password-file", let inline):
                self.passwordFile = try scanner.value(for: "password-file", inline: inline)
            case .option("acl-file", let inline):
                self.aclFile = try scanner.value(for: "acl-file", inline: inline)
            case .option("allow-anonymous", let inline):
                let text = try scanner.value(for: "allow-anonymous", inline: inline)
                switch text {
                case "true": self.allowAnonymous = true
                case "false": self.allowAnonymous = false
                default:
                    throw UsageError("'--allow-anonymous' must be true or false, not '\(text)'", subcommand: "broker")
                }
            case .option("data-dir", let inline):
                self.dataDirectory = try scanner.value(for: "data-dir", inline: inline)
            case .option("sync-interval", let inline):
                let text = try scanner.value(for: "sync-interval", inline: inline)
                self.syncIntervalSeconds = try parseSeconds(text, option: "sync-interval", subcommand: "broker")
                syncIntervalGiven = true
            case .option("verbose", let inline), .option("v", let inline):
                self.verbose = try scanner.flag("verbose", inline: inline)
            case .option(let name, let inline):
                if try self.tls.parse(name, inline: inline, scanner: &scanner) { continue }
                throw scanner.unknownOption(name)
            case .positional(let value):
                throw scanner.unexpectedArgument(value)
            }
        }
        _ = try self.tls.listener()
        if self.dataDirectory == nil, syncIntervalGiven {
            throw UsageError("'--sync-interval' needs '--data-dir'", subcommand: "broker")
        }
        if (self.username == nil) != (self.password == nil) {
            throw UsageError(
                "'--username' and '--password' go together (COATY_BROKER_USERNAME and COATY_BROKER_PASSWORD too)",
                subcommand: "broker"
            )
        }
    }
}

/// Where a client subcommand connects and which namespace it speaks in.
///
/// Each value comes from the command line, else from the environment (``environmentVariables``),
/// else from its default.
struct ConnectionOptions: Equatable {
    /// The brokers, in order of preference: `--broker` repeated, or `COATY_BROKER_URL` (several
    /// separated by commas). The transport fails over from one to the next.
    var brokers = ["mqtt://127.0.0.1:1883"]
    var namespace = "-"
    var username: String?
    var password: String?
    /// The TLS options, for an `mqtts://` or `wss://` broker.
    var tls = ClientTLSOptions()

    /// The environment variables read, by the option they stand in for.
    static let environmentVariables = [
        "broker": "COATY_BROKER_URL", "namespace": "COATY_NAMESPACE", "username": "COATY_USERNAME",
        "password": "COATY_PASSWORD",
    ]

    /// Whether the command line gave a broker: a further `--broker` adds a failover broker instead
    /// of replacing the environment's or the default.
    private var hasCommandLineBroker = false

    /// The preferred broker, named in messages.
    var broker: String {
        get { self.brokers[0] }
        set { self.brokers = [newValue] }
    }

    init() {}

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.brokers == rhs.brokers && lhs.namespace == rhs.namespace && lhs.username == rhs.username
            && lhs.password == rhs.password && lhs.tls == rhs.tls
    }

    /// The options the environment sets, checked as their command-line forms are; the command line
    /// then overrides them.
    init(environment: [String: String], subcommand: String) throws(UsageError) {
        func value(_ option: String) -> String? {
            guard let name = Self.environmentVariables[option], let value = environment[name], !value.isEmpty else {
                return nil
            }
            return value
        }
        if let urls = value("broker") {
            self.brokers = try urls.split(separator: ",").map { url throws(UsageError) in
                try Self.checkedBroker(String(url), source: "COATY_BROKER_URL", subcommand: subcommand)
            }
        }
        if let namespace = value("namespace") {
            self.namespace = try parseEventFilterName(
                namespace,
                "COATY_NAMESPACE (a namespace)",
                subcommand: subcommand
            )
        }
        self.username = value("username")
        self.password = value("password")
    }

    /// `url` if the transport accepts it as a broker address; `source` names where it came from.
    ///
    /// The transport's own parser, so a URL it would refuse (a bad port, no host) is a usage error
    /// now rather than a connect failure after the timeout.
    static func checkedBroker(_ url: String, source: String, subcommand: String) throws(UsageError) -> String {
        guard ["mqtt://", "tcp://", "mqtts://", "ws://", "wss://"].contains(where: url.hasPrefix),
            (try? MQTTBrokerAddress(parsing: url)) != nil
        else {
            throw UsageError(
                "\(source) takes an address like mqtt://host:port, mqtts://host:port or ws[s]://host:port/path, not '\(url)'",
                subcommand: subcommand
            )
        }
        return url
    }

    /// Consumes a connection option; returns false if `name` is not one.
    mutating func parse(
        _ name: String,
        inline: String?,
        scanner: inout ArgumentScanner
    ) throws(UsageError) -> Bool {
        switch name {
        case "broker", "b":
            let url = try Self.checkedBroker(
                try scanner.value(for: "broker", inline: inline),
                source: "'--broker'",
                subcommand: scanner.subcommand
            )
            if self.hasCommandLineBroker {
                self.brokers.append(url)
            } else {
                self.brokers = [url]
                self.hasCommandLineBroker = true
            }
        case "namespace", "n":
            self.namespace = try parseEventFilterName(
                try scanner.value(for: "namespace", inline: inline),
                "a namespace",
                subcommand: scanner.subcommand
            )
        case "username", "u": self.username = try scanner.value(for: "username", inline: inline)
        case "password", "P": self.password = try scanner.value(for: "password", inline: inline)
        default: return try self.tls.parse(name, inline: inline, scanner: &scanner)
        }
        return true
    }

    /// Checks what single options cannot: MQTT 3.1.1 sends a password only with a user name; a
    /// client certificate comes with its key; TLS options need an `mqtts://` or `wss://` broker.
    func validate(subcommand: String) throws(UsageError) {
        // TLS options need an mqtts:// or wss:// broker among those to fail over between.
        try self.tls.validate(
            broker: self.brokers.first { $0.hasPrefix("mqtts://") || $0.hasPrefix("wss://") } ?? self.broker,
            subcommand: subcommand
        )
        if self.password != nil, self.username == nil {
            throw UsageError(
                "'--password' needs '--username' (MQTT 3.1.1 has no password without a user name)",
                subcommand: subcommand
            )
        }
    }
}

/// Options of `coaty monitor`.
struct MonitorOptions: Equatable {
    var connection = ConnectionOptions()
    var allNamespaces = false
    var count: Int?
    var showPayload = false
    /// `--json`: one JSON object per line instead of readable text.
    var json = false
    /// `--sys`: also show the broker's `$SYS/#` statistics topics.
    var showSystemTopics = false

    init() {}

    init(parsing arguments: some Collection<String>, environment: [String: String] = [:]) throws(UsageError) {
        self.connection = try ConnectionOptions(environment: environment, subcommand: "monitor")
        var scanner = ArgumentScanner(arguments, subcommand: "monitor")
        while let token = scanner.next() {
            switch token {
            case .option(let name, let inline):
                if try self.connection.parse(name, inline: inline, scanner: &scanner) { continue }
                switch name {
                case "all-namespaces", "a": self.allNamespaces = try scanner.flag(name, inline: inline)
                case "payload": self.showPayload = try scanner.flag(name, inline: inline)
                case "json": self.json = try scanner.flag(name, inline: inline)
                case "sys": self.showSystemTopics = try scanner.flag(name, inline: inline)
                case "count", "c":
                    self.count = try parseCount(try scanner.value(for: "count", inline: inline), subcommand: "monitor")
                default:
                    throw scanner.unknownOption(name)
                }
            case .positional(let value):
                throw scanner.unexpectedArgument(value)
            }
        }
        try self.connection.validate(subcommand: "monitor")
    }
}

/// Options of `coaty discover`.
struct DiscoverOptions: Equatable {
    var connection = ConnectionOptions()
    var timeoutSeconds = 2.0

    init() {}

    init(parsing arguments: some Collection<String>, environment: [String: String] = [:]) throws(UsageError) {
        self.connection = try ConnectionOptions(environment: environment, subcommand: "discover")
        var scanner = ArgumentScanner(arguments, subcommand: "discover")
        while let token = scanner.next() {
            switch token {
            case .option(let name, let inline):
                if try self.connection.parse(name, inline: inline, scanner: &scanner) { continue }
                guard name == "timeout" || name == "t" else {
                    throw scanner.unknownOption(name)
                }
                self.timeoutSeconds = try parseSeconds(
                    try scanner.value(for: "timeout", inline: inline),
                    subcommand: "discover"
                )
            case .positional(let value):
                throw scanner.unexpectedArgument(value)
            }
        }
        try self.connection.validate(subcommand: "discover")
    }
}

/// Options of `coaty call`.
struct CallOptions: Equatable {
    var connection = ConnectionOptions()
    var operation = ""
    /// The parameters as JSON text: an object (by name) or an array (by position).
    var parameters: String?
    var timeoutSeconds = 2.0
    /// How many Returns to wait for (`--count`): the command returns as soon as they arrived.
    var count = 1

    init() {}

    init(parsing arguments: some Collection<String>, environment: [String: String] = [:]) throws(UsageError) {
        self.connection = try ConnectionOptions(environment: environment, subcommand: "call")
        var scanner = ArgumentScanner(arguments, subcommand: "call")
        var operation: String?
        while let token = scanner.next() {
            switch token {
            case .option(let name, let inline):
                if try self.connection.parse(name, inline: inline, scanner: &scanner) { continue }
                switch name {
                case "timeout", "t":
                    self.timeoutSeconds = try parseSeconds(
                        try scanner.value(for: "timeout", inline: inline),
                        subcommand: "call"
                    )
                case "count", "c":
                    self.count = try parseCount(try scanner.value(for: "count", inline: inline), subcommand: "call")
                case "params":
                    let text = try scanner.value(for: "params", inline: inline)
                    guard let first = text.first(where: { !$0.isWhitespace }), first == "{" || first == "[" else {
                        throw UsageError("'--params' takes a JSON object or array", subcommand: "call")
                    }
                    guard (try? AnyCodable(json: text)) != nil else {
                        throw UsageError("'--params' is not valid JSON: \(text)", subcommand: "call")
                    }
                    self.parameters = text
                default:
                    throw scanner.unknownOption(name)
                }
            case .positional(let value):
                guard operation == nil else { throw scanner.unexpectedArgument(value) }
                operation = value
            }
        }
        try self.connection.validate(subcommand: "call")
        guard let operation else { throw UsageError("missing operation name", subcommand: "call") }
        self.operation = try parseEventFilterName(operation, "an operation name", subcommand: "call")
    }
}

/// Options of `coaty router`.
struct RouterOptions: Equatable {
    var connection = ConnectionOptions()
    /// The IO context whose nodes are routed.
    var context = ""
    /// Exit after this many Associate events.
    var count: Int?

    init() {}

    init(parsing arguments: some Collection<String>, environment: [String: String] = [:]) throws(UsageError) {
        self.connection = try ConnectionOptions(environment: environment, subcommand: "router")
        var scanner = ArgumentScanner(arguments, subcommand: "router")
        var context: String?
        while let token = scanner.next() {
            switch token {
            case .option(let name, let inline):
                if try self.connection.parse(name, inline: inline, scanner: &scanner) { continue }
                guard name == "count" || name == "c" else {
                    throw scanner.unknownOption(name)
                }
                self.count = try parseCount(try scanner.value(for: "count", inline: inline), subcommand: "router")
            case .positional(let value):
                guard context == nil else { throw scanner.unexpectedArgument(value) }
                context = value
            }
        }
        try self.connection.validate(subcommand: "router")
        guard let context else { throw UsageError("missing IO context name", subcommand: "router") }
        self.context = try parseEventFilterName(context, "an IO context name", subcommand: "router")
    }
}

/// A name that becomes a topic level (namespace, operation, IO context), checked as Coaty checks it;
/// `what` names it in the message ("a namespace").
func parseEventFilterName(_ name: String, _ what: String, subcommand: String) throws(UsageError) -> String {
    guard CoatyTopic.isValidEventFilter(name) else {
        throw UsageError("\(what) must be non-empty and must not contain '/', '+', '#' or NUL", subcommand: subcommand)
    }
    return name
}

func parseCount(_ text: String, subcommand: String) throws(UsageError) -> Int {
    guard let count = Int(text), count > 0 else {
        throw UsageError("'--count' must be a positive number, not '\(text)'", subcommand: subcommand)
    }
    return count
}

/// A port number given to `--option`: 0 (any free port) to 65535.
func parsePort(_ text: String, option: String = "port", subcommand: String) throws(UsageError) -> Int {
    guard let port = Int(text), (0...65_535).contains(port) else {
        throw UsageError("'--\(option)' must be a number from 0 to 65535, not '\(text)'", subcommand: subcommand)
    }
    return port
}

func parseSeconds(_ text: String, option: String = "timeout", subcommand: String) throws(UsageError) -> Double {
    let trimmed = text.hasSuffix("s") ? String(text.dropLast()) : text
    guard let seconds = Double(trimmed), seconds > 0, seconds <= 3600 else {
        throw UsageError(
            "'--\(option)' must be a number of seconds from 0 to 3600, not '\(text)'",
            subcommand: subcommand
        )
    }
    return seconds
}
