/// The parsed command line of `io-routing`.
struct Options: Equatable {
    /// What to run.
    enum Role: String, CaseIterable {
        case scene, router, sensor, display, help
    }

    /// A command line that cannot be run; main prints it with the usage and exits with 64.
    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    var role = Role.scene
    var broker = "mqtt://127.0.0.1:1883"
    var namespace = "-"
    var username: String?
    var password: String?
    /// The CA certificates an `mqtts://` broker's certificate must chain to, instead of the system's.
    var caFile: String?
    var room = "living room"
    var readings = 20
    /// A display leaves after showing this many readings, if its association has not ended before.
    var shows: Int?

    /// Settings taken from the environment where the command line does not give them.
    static let environmentVariables = [
        "COATY_BROKER_URL", "COATY_NAMESPACE", "COATY_USERNAME", "COATY_PASSWORD", "COATY_CAFILE",
    ]

    /// Parses the arguments after the program name; `environment` supplies the broker, namespace and
    /// credentials (``environmentVariables``) that the command line does not.
    init(parsing arguments: [String], environment: [String: String] = [:]) throws {
        let set = environment.filter { !$0.value.isEmpty }
        self.broker = set["COATY_BROKER_URL"] ?? self.broker
        self.namespace = set["COATY_NAMESPACE"] ?? self.namespace
        self.username = set["COATY_USERNAME"]
        self.password = set["COATY_PASSWORD"]
        self.caFile = set["COATY_CAFILE"]
        guard self.broker.hasPrefix("mqtt://") || self.broker.hasPrefix("mqtts://") else {
            throw UsageError(description: "COATY_BROKER_URL takes mqtt://host:port or mqtts://host:port")
        }
        var remaining = arguments[...]
        if let first = remaining.first, let role = Role(rawValue: first), role != .help {
            self.role = role
            remaining.removeFirst()
        }
        while let argument = remaining.popFirst() {
            func value() throws -> String {
                guard let value = remaining.popFirst() else {
                    throw UsageError(description: "'\(argument)' needs a value")
                }
                return value
            }
            switch argument {
            case "-h", "--help", "help":
                self.role = .help
            case "--broker":
                self.broker = try value()
                guard self.broker.hasPrefix("mqtt://") || self.broker.hasPrefix("mqtts://") else {
                    throw UsageError(description: "'--broker' takes mqtt://host:port or mqtts://host:port")
                }
            case "--namespace":
                self.namespace = try value()
            case "--room":
                self.room = try value()
                guard !self.room.isEmpty else { throw UsageError(description: "'--room' needs a name") }
            case "--readings":
                let text = try value()
                guard let readings = Int(text), (3...100).contains(readings) else {
                    throw UsageError(description: "'--readings' takes a number from 3 to 100, not '\(text)'")
                }
                self.readings = readings
            case "--shows":
                let text = try value()
                guard let shows = Int(text), (1...100).contains(shows) else {
                    throw UsageError(description: "'--shows' takes a number from 1 to 100, not '\(text)'")
                }
                self.shows = shows
            default:
                throw UsageError(description: "unexpected argument '\(argument)'")
            }
        }
    }
}
