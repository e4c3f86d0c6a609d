import CoatyCommunication
import CoatyModel
import CoatyTransport

/// Publishes messages on `bus` through a bare connection, as a foreign (possibly misbehaving) client.
func publishRaw(on bus: InProcessBus, _ messages: [(String, String)]) async throws {
    try await InProcessTransport(bus: bus).withConnection(
        .init(clientID: "rogue-\(ObjectID.random())"),
        onMessage: { _ in }
    ) {
        connection in
        for (topic, payload) in messages {
            try await connection.publish(TransportMessage(topic: topic, payload: Array(payload.utf8)))
        }
    }
}
