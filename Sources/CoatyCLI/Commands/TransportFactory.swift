import CoatyCommunication
import CoatyMQTT
import CoatyTransport

/// Builds the transport a client subcommand connects with.
enum TransportFactory {
    static func make(_ options: ConnectionOptions) throws -> any Transport {
        let url = options.broker.hasPrefix("tcp://") ? "mqtt://" + options.broker.dropFirst(6) : options.broker
        return MQTTTransport(
            configuration: .init(
                brokerURL: url,
                username: options.username,
                password: options.password,
                connectTimeout: .seconds(5)
            )
        )
    }
}
