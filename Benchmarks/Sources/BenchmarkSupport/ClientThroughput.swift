import CoatyCore
package import CoatyMQTT
package import CoatyTransport

/// One throughput run of our MQTT client: a subscriber connection subscribes to `topic` at the
/// transport's subscription QoS, then a publisher connection sends `count` messages, cycling through
/// `messages`. QoS 0 publishes go back to back; QoS 1 publishes run in 20 concurrent lanes,
/// `mosquitto_pub`'s default in-flight window. Returns the seconds from opening the publisher
/// connection until the subscriber has received all `count`.
package func clientThroughput(
    _ transport: MQTTTransport,
    topic: String,
    messages: [TransportMessage],
    count: Int,
    run: Int
) async throws -> Double {
    let counter = MessageCounter()
    counter.reset(target: count)
    return try await transport.withConnection(
        .init(clientID: "bench-sub-\(run)"),
        onMessage: { _ in counter.received() }
    ) { subscriber in
        try await subscriber.subscribe(to: [TopicFilter(topic)])
        let start = ContinuousClock.now
        try await transport.withConnection(.init(clientID: "bench-pub-\(run)"), onMessage: { _ in }) { publisher in
            if messages.first?.qos == .atMostOnce {
                for index in 0..<count { try await publisher.publish(messages[index % messages.count]) }
            } else {
                let lanes = 20
                try await withThrowingDiscardingTaskGroup { group in
                    for lane in 0..<lanes {
                        group.addTask {
                            var index = lane
                            while index < count {
                                try await publisher.publish(messages[index % messages.count])
                                index += lanes
                            }
                        }
                    }
                }
            }
            await counter.waitForTarget()
        }
        return seconds(ContinuousClock.now - start)
    }
}
