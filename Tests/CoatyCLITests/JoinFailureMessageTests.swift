import CoatyMQTT
import CoatyTransport
import Testing

@testable import CoatyCLI

/// The words for each way joining can fail, from the transport's error.
struct JoinFailureMessageTests {
    static let broker = "mqtt://127.0.0.1:1883"

    @Test(arguments: [
        (
            TransportError(
                .connectFailed,
                "\(broker) closed the connection with no CONNACK",
                underlying: MQTTHandshakeFailure()
            ),
            "the broker at \(broker) accepted the connection but closed it without answering the MQTT handshake"
        ),
        (
            TransportError(.timedOut, "no connection to \(broker) within 5.0 seconds"),
            "cannot reach the broker at \(broker): no connection within 5 s"
        ),
        (
            TransportError(.protocolViolation, "the broker sent PUBLISH before CONNACK"),
            "the broker at \(broker) did not answer as an MQTT 3.1.1 broker: the broker sent PUBLISH before CONNACK"
        ),
        (
            TransportError(
                .connectionRefused,
                "the broker refused the connection: the MQTT service is unavailable (serverUnavailable, return code 3)"
            ),
            "the broker at \(broker) refused the connection: the MQTT service is unavailable (serverUnavailable, "
                + "return code 3)"
        ),
    ])
    func messages(error: TransportError, expected: String) {
        #expect(JoinFailure.message(for: error, brokers: [Self.broker]) == expected)
    }
}
