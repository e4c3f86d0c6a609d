import Foundation

// The latency row of BrokerBenchmark: a request/response ping-pong between two raw MQTT connections
// through each broker, QoS 0 and a small payload, so that the figures are the broker's own delay.

/// A requester and a responder connected to one broker, each subscribed to the other's topic.
struct PingPongPair {
    let broker: BrokerProcess
    let requester: LoadClient
    let responder: LoadClient
    private let request: [UInt8]
    private let response: [UInt8]

    init(_ broker: BrokerProcess) throws {
        self.broker = broker
        self.requester = try LoadClient(port: broker.port, clientID: "ping-requester")
        self.responder = try LoadClient(port: broker.port, clientID: "ping-responder")
        try self.requester.send(Packets.subscribe("bench/pong", qos: 0))
        _ = try self.requester.nextPacket()
        try self.responder.send(Packets.subscribe("bench/ping", qos: 0))
        _ = try self.responder.nextPacket()
        let payload = [UInt8](repeating: 0x42, count: 16)
        self.request = Packets.publish(topic: "bench/ping", payload: payload, qos: 0, packetID: 0)
        self.response = Packets.publish(topic: "bench/pong", payload: payload, qos: 0, packetID: 0)
    }

    /// One round trip: the request through the broker to the responder, which answers at once, and the
    /// response back through the broker. One thread plays both clients, so no thread hand-off of the
    /// load generator is in the figure.
    func roundTrip() throws -> Duration {
        let start = ContinuousClock.now
        try self.requester.send(self.request)
        try Self.awaitPublish(on: self.responder)
        try self.responder.send(self.response)
        try Self.awaitPublish(on: self.requester)
        return ContinuousClock.now - start
    }

    private static func awaitPublish(on client: LoadClient) throws {
        while true {
            let (type, _) = try client.nextPacket()
            if type == 3 { return }
        }
    }
}

/// Prints the median and 99th percentile of request/response round trips through each broker, the
/// brokers taking turns in `rounds` rounds so that both see the same machine load.
func reportLatency(rounds: Int, roundTripsPerRound: Int, warmUp: Int) throws {
    let brokers = [try BrokerProcess.embedded(), try BrokerProcess.mosquitto()]
    defer { for broker in brokers { broker.stop() } }
    let pairs = try brokers.map { try PingPongPair($0) }
    for pair in pairs {
        for _ in 0..<warmUp { _ = try pair.roundTrip() }
    }
    var samples = [[Double]](repeating: [], count: pairs.count)
    for _ in 0..<rounds {
        for (index, pair) in pairs.enumerated() {
            for _ in 0..<roundTripsPerRound {
                let elapsed = try pair.roundTrip()
                let micros =
                    Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
                samples[index].append(micros)
            }
        }
    }
    print(
        "\nrequest/response round trip (QoS 0, 16-byte payload, \(rounds * roundTripsPerRound) per broker "
            + "after \(warmUp) warm-up, brokers alternating in \(rounds) rounds):"
    )
    for (pair, values) in zip(pairs, samples) {
        let sorted = values.sorted()
        let median = sorted[sorted.count / 2]
        let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        print(
            "  " + pad(pair.broker.name, 11) + "median \(format(median, decimals: 1)) µs, "
                + "p99 \(format(p99, decimals: 1)) µs"
        )
    }
}
