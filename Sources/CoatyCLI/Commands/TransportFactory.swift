import CoatyCommunication
import CoatyMQTT
import CoatyTransport

/// Builds the transport a client subcommand connects with.
enum TransportFactory {
    /// How long a connect attempt to one broker may take, up to CONNACK.
    static let connectTimeoutSeconds = 5

    /// The transport for `options`; warns on standard error when `--insecure` turns verification off.
    static func make(_ options: ConnectionOptions) throws -> any Transport {
        if options.tls.isInsecure {
            Console.error(
                "warning: --insecure: the broker's certificate is not verified; anyone on the path can read and change the traffic\n"
            )
        }
        let urls = options.brokers.map { $0.hasPrefix("tcp://") ? "mqtt://" + $0.dropFirst(6) : $0 }
        return MQTTTransport(
            configuration: .init(
                brokerURL: urls[0],
                failoverBrokerURLs: Array(urls.dropFirst()),
                username: options.username,
                password: options.password,
                connectTimeout: .seconds(Self.connectTimeoutSeconds),
                tls: options.tls.transportOptions
            )
        )
    }
}
