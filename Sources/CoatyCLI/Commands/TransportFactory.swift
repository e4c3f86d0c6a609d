import CoatyCommunication
import CoatyMQTT
import CoatyTransport

/// Builds the transport a client subcommand connects with.
enum TransportFactory {
    static func make(_ options: ConnectionOptions) throws -> any Transport {
        let urls = options.brokers.map { $0.hasPrefix("tcp://") ? "mqtt://" + $0.dropFirst(6) : $0 }
        return MQTTTransport(
            configuration: .init(
                brokerURL: urls[0],
                failoverBrokerURLs: Array(urls.dropFirst()),
                username: options.username,
                password: options.password,
                connectTimeout: .seconds(5)
            )
        )
    }
}
