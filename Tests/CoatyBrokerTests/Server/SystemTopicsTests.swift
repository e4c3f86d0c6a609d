import CoatyBroker
import CoatyMQTTPackets
import Foundation
import TestSupport
import Testing

/// The `$SYS/broker/…` statistics topics: published retained at the configured interval, seen by
/// mosquitto_sub, and never matched by `#`.
@Suite(.timeLimit(.minutes(1)))
struct SystemTopicsTests {
    static let topics = [
        "$SYS/broker/version", "$SYS/broker/uptime", "$SYS/broker/clients/connected",
        "$SYS/broker/messages/received", "$SYS/broker/messages/sent", "$SYS/broker/bytes/received",
        "$SYS/broker/bytes/sent",
    ]

    @Test func mosquittoSubSeesTheStatistics() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_sub"))
        // A short interval, so that the test does not wait 10 s for a change.
        try await MQTTBroker.withRunning(configuration: .init(systemTopicInterval: .milliseconds(50))) { broker in
            let result = try await runProcess(
                "/usr/bin/mosquitto_sub",
                ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "$SYS/#", "-v", "-C", "7", "-W", "10"]
            )
            #expect(result.status == 0, "\(result.errorOutput)")
            let lines = result.output.split(separator: "\n").map(String.init)
            var values: [String: String] = [:]
            for line in lines {
                let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
                if parts.count == 2 { values[parts[0]] = parts[1] }
            }
            #expect(Set(values.keys) == Set(Self.topics), "\(lines)")
            #expect(values["$SYS/broker/version"]?.hasPrefix("coaty broker ") == true)
            #expect(values["$SYS/broker/uptime"]?.hasSuffix(" seconds") == true)
            // The retained values from before mosquitto_sub connected.
            #expect(values["$SYS/broker/clients/connected"].flatMap { Int($0) } != nil)
            #expect(values["$SYS/broker/bytes/sent"].flatMap { Int($0) } != nil)
        }
    }

    /// Counters change with traffic and are republished at the next interval; `#` gets only the
    /// application's topics [MQTT-4.7.2-1].
    @Test func countersFollowTrafficAndHashDoesNotMatchThem() async throws {
        try await MQTTBroker.withRunning(configuration: .init(systemTopicInterval: .milliseconds(20))) { broker in
            var everything = try await RawMQTTClient.connected(port: broker.port, clientID: "everything")
            try await everything.subscribe("#", qos: .atMostOnce)
            var system = try await RawMQTTClient.connected(port: broker.port, clientID: "system")
            try await system.subscribe("$SYS/broker/messages/received", qos: .atMostOnce)
            let publisher = try await RawMQTTClient.connected(port: broker.port, clientID: "publisher")
            for _ in 0..<3 { try await publisher.send(.publish(MQTTPublishPacket(topic: "app/x", payload: [1]))) }
            // The retained value first, then values as they change, up to the three publishes.
            var last = ""
            while last != "3" {
                guard case .publish(let message) = try await system.receivePacket(timeout: .seconds(5)) else {
                    continue
                }
                #expect(message.topic == "$SYS/broker/messages/received")
                last = String(decoding: message.payload, as: UTF8.self)
            }
            for _ in 0..<3 {
                guard case .publish(let message) = try await everything.receivePacket() else {
                    Issue.record("expected a PUBLISH")
                    return
                }
                #expect(message.topic == "app/x")
            }
            try await everything.send(.pingreq)
            #expect(try await everything.receivePacket() == .pingresp)
        }
    }
}
