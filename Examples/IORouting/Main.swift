import CoatyBroker
import CoatyCore
import CoatyMQTT

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `io-routing`: IO routing in a home, all agents through the embedded broker, or one agent against any
/// broker.
@main
enum IORoutingMain {
    static let usage = """
        USAGE: io-routing [scene] [--readings <n>]
               io-routing router|sensor|display [--broker <url>] [--namespace <ns>] [--room <room>] [--shows <n>] [--readings <n>]

          scene (default)  Start the embedded broker and run every agent in this process.
          router           Route the IO context com.example.Home; leaves once every association it made has ended.
          sensor           The thermometer: publishes its readings 100 ms apart once associated, then leaves;
                           leaves early if its association ends.
          display          A display: shows the readings it gets until its association ends.

        OPTIONS:
          --broker <url>     The broker, mqtt://host:port or mqtts://host:port (TLS). (default: mqtt://127.0.0.1:1883)
          --namespace <ns>   The Coaty namespace. (default: -)
          --room <room>      The display's room. (default: living room)
          --shows <n>        The display leaves after showing this many readings, 1 to 100.
          --readings <n>     How many readings the sensor publishes, 3 to 100. (default: 20)
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
        do {
            switch options.role {
            case .help: StandardStream.output.write(usage + "\n")
            case .scene: try await runScene(readings: options.readings)
            case .router, .sensor, .display: try await AgentRole.run(options)
            }
        } catch {
            StandardStream.error.write("error: \(error)\n")
            exit(1)
        }
    }

    /// Runs the scene through the embedded broker on a free port and checks what the displays showed.
    static func runScene(readings: Int) async throws {
        let narrator = Narrator()
        try await MQTTBroker.withRunning { broker in
            let url = "mqtt://127.0.0.1:\(broker.port)"
            narrator.say("IO routing at home, through the embedded MQTT broker on \(url).")
            let result = try await HomeScene.run(readings: readings, pacing: .milliseconds(100), narrator: narrator) {
                MQTTTransport(brokerURL: url)
            }
            for line in HomeScene.summary(result, readings: readings) { narrator.say(line) }
            guard result == HomeScene.expected(readings: readings) else {
                throw ExampleError(description: "the displays did not show the readings expected")
            }
        }
    }
}
