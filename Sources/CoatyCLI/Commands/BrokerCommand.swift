import CoatyBroker
import CoatyCore

/// `coaty broker`: runs the embedded broker until interrupted.
enum BrokerCommand {
    static func run(_ options: BrokerOptions) async throws {
        var configuration = MQTTBroker.Configuration()
        if let size = options.maximumPacketSize { configuration.maximumPacketSize = size }
        configuration.webSocketPort = options.webSocketPort
        if let username = options.username, let password = options.password {
            configuration.credentials = .init(username: username, password: password)
        }
        configuration.logger = Logger(
            label: "coaty.broker",
            level: options.verbose ? .debug : .notice,
            handler: StreamLogHandler()
        )
        let broker = try MQTTBroker.bind(host: options.host, port: options.port, configuration: configuration)
        Console.line("coaty broker listening on mqtt://\(options.host):\(broker.port) (Ctrl-C to stop)")
        if let webSocketPort = broker.webSocketPort {
            Console.line("coaty broker listening on ws://\(options.host):\(webSocketPort) (MQTT over WebSocket)")
        }
        try await Signals.runUntilInterrupted {
            try await broker.run()
        }
        Console.line("coaty broker stopped")
    }
}
