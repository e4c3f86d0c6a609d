import CoatyBroker
import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `hello-world`: the whole scene through the embedded broker, or one agent against any broker.
@main
enum HelloWorldMain {
    static let usage = """
        USAGE: hello-world [scene] [--tasks <n>]
               hello-world service|client|monitor [--broker <url>] [--namespace <ns>] [--name <name>] [--tasks <n>] [--agents <n>]

          scene (default)  Start the embedded broker and run all agents in this process.
          service          The service agent: offers tasks, assigns them, greets, answers queries.
          client           A client agent: claims tasks and does them. Use --name to tell clients apart.
          monitor          The monitor agent: follows agents, tasks and logs.

        OPTIONS:
          --broker <url>     The broker, mqtt://host:port or mqtts://host:port (TLS). (default: mqtt://127.0.0.1:1883)
          --namespace <ns>   The Coaty namespace. (default: -)
          --tasks <n>        How many tasks the service offers. (default: 3)
          --name <name>      The client's name. (default: client)
          --agents <n>       The service waits for this many other agents before offering tasks. (default: 1)
          -h, --help         Show this help.

        ENVIRONMENT (the command line wins):
          COATY_BROKER_URL, COATY_NAMESPACE  Defaults for --broker and --namespace.
          COATY_USERNAME, COATY_PASSWORD     MQTT credentials of a single agent.
          COATY_CAFILE                       mqtts: trust these CA certificates (PEM) instead of the system's.
        """

    static func main() async {
        let options: Options
        do {
            options = try Options(parsing: Array(CommandLine.arguments.dropFirst()), environment: environment())
        } catch {
            StandardStream.error.write("error: \(error)\n\n\(usage)\n")
            exit(64)
        }
        if options.role == "help" {
            StandardStream.output.write(usage + "\n")
            return
        }
        do {
            switch options.role {
            case "scene": try await runScene(options)
            default: try await SingleAgent.run(options)
            }
        } catch {
            StandardStream.error.write("error: \(error)\n")
            exit(1)
        }
    }

    static func runScene(_ options: Options) async throws {
        let narrator = Narrator()
        try await MQTTBroker.withRunning { broker in
            let url = "mqtt://127.0.0.1:\(broker.port)"
            narrator.say("Hello, Coaty! Embedded MQTT broker on \(url); a monitor, a service and two clients join.")
            let summary = try await Scene.run(tasks: options.tasks, pacing: .milliseconds(300), narrator: narrator) {
                MQTTTransport(brokerURL: url)
            }
            for line in Scene.summary(summary, tasks: options.tasks) { narrator.say(line) }
            guard summary.finishedTasks.count == options.tasks else {
                throw SceneError(description: "only \(summary.finishedTasks.count) of \(options.tasks) tasks were done")
            }
        }
    }
}

/// The parsed command line.
struct Options: Equatable {
    var role = "scene"
    var broker = "mqtt://127.0.0.1:1883"
    var namespace = "-"
    var username: String?
    var password: String?
    /// The CA certificates an `mqtts://` broker's certificate must chain to, instead of the system's.
    var caFile: String?
    var name = "client"
    var tasks = 3
    var agents = 1

    /// Settings taken from the environment where the command line does not give them.
    static let environmentVariables = [
        "COATY_BROKER_URL", "COATY_NAMESPACE", "COATY_USERNAME", "COATY_PASSWORD", "COATY_CAFILE",
    ]

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

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
        var index = 0
        func value(_ option: String) throws -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(description: "missing value for '\(option)'") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "-h", "--help", "help": self.role = "help"
            case _ where index == 0 && ["scene", "service", "client", "monitor"].contains(argument):
                self.role = argument
            case "--broker":
                self.broker = try value(argument)
                guard self.broker.hasPrefix("mqtt://") || self.broker.hasPrefix("mqtts://") else {
                    throw UsageError(description: "'--broker' takes mqtt://host:port or mqtts://host:port")
                }
            case "--namespace": self.namespace = try value(argument)
            case "--name": self.name = try value(argument)
            case "--agents":
                let text = try value(argument)
                guard let agents = Int(text), (1...100).contains(agents) else {
                    throw UsageError(description: "'--agents' must be a number from 1 to 100, not '\(text)'")
                }
                self.agents = agents
            case "--tasks":
                let text = try value(argument)
                guard let tasks = Int(text), (1...100).contains(tasks) else {
                    throw UsageError(description: "'--tasks' must be a number from 1 to 100, not '\(text)'")
                }
                self.tasks = tasks
            default: throw UsageError(description: "unexpected argument '\(argument)'")
            }
            index += 1
        }
    }
}
