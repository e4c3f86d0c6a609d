import CoatyCore
import CoatyMQTTPackets
import CoatySockets
import CoatyTransport
import Synchronization

extension MQTTTransport {
    /// Opens a connection to `broker` and completes the MQTT handshake, within the connect timeout.
    ///
    /// - Returns: The connection, the decoder holding what arrived after the CONNACK, and whether
    ///   the broker kept a session.
    /// - Throws: `TransportError` (`.connectFailed`, `.timedOut`, `.connectionRefused`,
    ///   `.protocolViolation`); `CancellationError`. A failure after the broker accepted the connection
    ///   (`.timedOut` or `.connectFailed` with no CONNACK) has an ``MQTTHandshakeFailure`` as its cause.
    static func connect(
        to broker: MQTTBrokerAddress,
        _ connect: MQTTConnectPacket,
        configuration: Configuration,
        onMessage: @escaping @Sendable (TransportMessage) -> Void
    ) async throws -> (MQTTConnection, MQTTPacketDecoder, Bool) {
        let opened = OpenedFlag()
        return try await withTimeout(
            configuration.connectTimeout,
            clock: ElapsedClock(configuration.clock),
            timeoutError: {
                guard opened.value.load(ordering: .acquiring) else {
                    return TransportError(
                        .timedOut,
                        "no connection to \(broker) within \(configuration.connectTimeout)"
                    )
                }
                return TransportError(
                    .timedOut,
                    "\(broker) accepted the connection but sent no CONNACK within \(configuration.connectTimeout)",
                    underlying: MQTTHandshakeFailure()
                )
            }
        ) { () async throws -> (MQTTConnection, MQTTPacketDecoder, Bool) in
            let socket = try await Self.open(broker, configuration: configuration)
            opened.value.store(true, ordering: .releasing)
            let connection = MQTTConnection(
                socket: socket,
                broker: broker,
                configuration: configuration,
                onMessage: onMessage
            )
            do {
                let (decoder, sessionPresent) = try await connection.handshake(connect)
                return (connection, decoder, sessionPresent)
            } catch {
                socket.close()
                throw error
            }
        }
    }

    /// After the connection to broker `index` was lost, the next attempt starts with the broker after
    /// it (unless another connection has chosen a broker meanwhile).
    func preferNext(after index: Int) {
        let count = self.configuration.brokerURLs.count
        guard count > 1 else { return }
        self.preferredBroker.index.withLock { preferred in
            if preferred == index { preferred = (index + 1) % count }
        }
    }
}

/// Which of an ``MQTTTransport``'s brokers to try first, shared by the transport's copies.
final class PreferredBroker: Sendable {
    let index = Mutex(0)
}

/// Whether a connect attempt got as far as an open connection, for the timeout's message.
private final class OpenedFlag: Sendable {
    let value = Atomic(false)
}
