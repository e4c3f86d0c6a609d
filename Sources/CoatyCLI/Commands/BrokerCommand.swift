import CoatyBroker
import CoatyCore

/// `coaty broker`: runs the embedded broker until interrupted.
enum BrokerCommand {
    static func run(_ options: BrokerOptions) async throws {
        var configuration = MQTTBroker.Configuration()
        if let size = options.maximumPacketSize { configuration.maximumPacketSize = size }
        configuration.webSocketPort = options.webSocketPort
        configuration.tls = try options.tls.listener()
        if let username = options.username, let password = options.password {
            configuration.credentials = .init(username: username, password: password)
        }
        if let path = options.passwordFile {
            let passwordFile = try PasswordFile(contentsOfFile: path)
            if let skipped = passwordFile.skippedLinesError {
                Console.error("warning: password file '\(path)': \(skipped.message)\n")
            }
            configuration.passwordFile = passwordFile
        }
        if let path = options.aclFile {
            configuration.accessControlList = try AccessControlList(contentsOfFile: path)
        }
        configuration.allowAnonymous = options.allowAnonymous
        if let directory = options.dataDirectory {
            configuration.persistence = .init(
                directory: directory,
                syncInterval: .milliseconds(Int((options.syncIntervalSeconds * 1000).rounded(.up)))
            )
        }
        configuration.logger = CoatyLogger(
            label: "coaty.broker",
            level: options.verbose ? .debug : .notice,
            handler: TimestampedLogHandler()
        )
        let broker = try MQTTBroker.bind(host: options.host, port: options.port, configuration: configuration)
        Console.line("coaty broker listening on mqtt://\(options.host):\(broker.port) (Ctrl-C to stop)")
        if let webSocketPort = broker.webSocketPort {
            Console.line("coaty broker listening on ws://\(options.host):\(webSocketPort) (MQTT over WebSocket)")
        }
        if let tlsPort = broker.tlsPort {
            Console.line("coaty broker listening on mqtts://\(options.host):\(tlsPort) (MQTT over TLS)")
        }
        if let secureWebSocketPort = broker.secureWebSocketPort {
            Console.line(
                "coaty broker listening on wss://\(options.host):\(secureWebSocketPort) (MQTT over WebSocket over TLS)"
            )
        }
        try await Signals.runUntilInterrupted {
            try await broker.run()
        }
        Console.line("coaty broker stopped")
    }
}
