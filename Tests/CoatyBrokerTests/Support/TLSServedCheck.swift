import CoatyCore
import CoatyMQTT
import CoatyTransport

/// Connects our client over TLS to the broker's listener on `port`, trusting `caFile`, and publishes
/// one message at QoS 1: returns once the broker acknowledged it, so the listener still serves.
func expectTLSListenerServes(port: Int, caFile: String) async throws {
    let transport = MQTTTransport(
        configuration: .init(brokerURL: "mqtts://127.0.0.1:\(port)", tls: .init(trustedCertificates: .file(caFile)))
    )
    try await transport.withConnection(.init(clientID: "after"), onMessage: { _ in }) { connection in
        try await connection.publish(TransportMessage(topic: "a", payload: [1], qos: .atLeastOnce))
    }
}
