import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyTransport
import Testing

/// Checks, against the broker on `brokerPort`, that a QoS 1 or 2 publication whose PUBLISH died with the
/// link is sent again when the publisher's persistent session resumes, and reaches a subscriber once,
/// before what the publisher sends next [MQTT-4.4.0-1].
///
/// The publisher connects through a ``TCPProxy`` with clean session 0; the proxy swallows its PUBLISH
/// and then cuts the link, so the broker never sees the message on that connection.
func checkPublicationLostWithTheLinkIsSentAgain(brokerPort: Int, qos: QualityOfService) async throws {
    try await TCPProxy.withProxy(to: brokerPort) { proxy in
        let topic = "resent/\(qos.rawValue)"
        let lost = TransportMessage(topic: topic, payload: Array("lost with the link".utf8), qos: qos)
        let after = TransportMessage(topic: topic, payload: Array("after".utf8), qos: qos)
        let publisher = MQTTTransport(
            configuration: .init(brokerURL: proxy.url, cleanSession: false, connectTimeout: .seconds(5))
        )
        let publisherID = "resent-pub-\(qos.rawValue)"
        let subscriber = MQTTTransport(
            configuration: .init(brokerURL: "mqtt://127.0.0.1:\(brokerPort)", connectTimeout: .seconds(5))
        )
        let inbox = Inbox()
        try await subscriber.withMQTTConnection(
            .init(clientID: "resent-sub-\(qos.rawValue)"),
            onMessage: inbox.onMessage
        ) {
            subscription in
            try await subscription.subscribe(to: [TopicFilter(topic)], qos: qos)
            var publishError: (any Error)?
            await #expect(throws: TransportError.self) {
                try await publisher.withConnection(.init(clientID: publisherID), onMessage: { _ in }) { connection in
                    proxy.swallowClientBytes(true)
                    publishError = await withTaskGroup { group in
                        group.addTask { () -> (any Error)? in
                            do {
                                try await connection.publish(lost)
                                return nil
                            } catch {
                                return error
                            }
                        }
                        var swallowed = proxy.swallowedChunks.makeAsyncIterator()
                        _ = await swallowed.next()
                        proxy.cutAll()
                        return await group.next() ?? nil
                    }
                }
            }
            let error = try #require(publishError as? TransportError)
            #expect(error.code == .connectionLost)
            #expect(error.underlying is MQTTPublicationKept)
            proxy.swallowClientBytes(false)
            try await publisher.withConnection(.init(clientID: publisherID), onMessage: { _ in }) { connection in
                try await connection.publish(after)
            }
            let received = await inbox.next(2)
            #expect(received.map(\.payload) == [lost.payload, after.payload])
        }
    }
}
