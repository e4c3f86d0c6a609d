import CoatyMQTTPackets
import TestSupport
import Testing

@testable import CoatyBroker

/// Idle TCP connections wait with no task of their own (``ParkedConnections``): they are still served
/// in every way, and a broker that stops ends them as it ends the others.
@Suite(.timeLimit(.minutes(1)))
struct ParkedConnectionTests {
    private func publish(_ topic: String, _ payload: [UInt8], qos: MQTTQoS = .atMostOnce, packetID: UInt16? = nil)
        -> MQTTPacket
    {
        .publish(MQTTPublishPacket(topic: topic, payload: payload, qos: qos, retain: false, packetID: packetID))
    }

    @Test func idleClientsParkAndAreServedInEveryWay() async throws {
        try await MQTTBroker.withRunning { broker in
            var subscriber = try await RawMQTTClient.connected(port: broker.port, clientID: "sub")
            _ = try await subscriber.subscribe("t/#", qos: .atLeastOnce)
            var publisher = try await RawMQTTClient.connected(port: broker.port, clientID: "pub")
            await broker.parked.waitUntil(count: 2)

            // Small packets, which the reactor's thread handles for the parked connections.
            try await publisher.send(self.publish("t/small", [1, 2, 3], qos: .atLeastOnce, packetID: 7))
            #expect(try await publisher.receivePacket() == .puback(7))
            guard case .publish(let small) = try await subscriber.receivePacket() else {
                Issue.record("expected the small message")
                return
            }
            #expect(small.payload == [1, 2, 3])
            try await subscriber.send(.puback(try #require(small.packetID)))
            try await publisher.send(.pingreq)
            #expect(try await publisher.receivePacket() == .pingresp)
            await broker.parked.waitUntil(count: 2)

            // A read too large for the reactor's thread, and more than the subscriber's socket takes
            // at once: both connections need tasks again, and then park again.
            let large = [UInt8](repeating: 0x5A, count: 1 << 20)
            try await publisher.send(self.publish("t/large", large))
            guard case .publish(let received) = try await subscriber.receivePacket(timeout: .seconds(10)) else {
                Issue.record("expected the large message")
                return
            }
            #expect(received.payload == large)
            await broker.parked.waitUntil(count: 2)

            try await publisher.send(.disconnect)
            #expect(await publisher.isClosedByPeer())
            await broker.parked.waitUntil(count: 1)
        }
    }

    /// The keep-alive runs on a manual clock: on the real one a loaded machine could let the silent
    /// client's 1.5 s run out before both clients were parked.
    @Test func aParkedClientsSilencePastItsKeepAliveEndsItWithItsWill() async throws {
        let clock = ManualClock()
        try await MQTTBroker.withRunning(configuration: ManualBrokerClock.configuration(clock: clock)) { broker in
            var watcher = try await RawMQTTClient.connected(port: broker.port, clientID: "watcher")
            _ = try await watcher.subscribe("status/#", qos: .atMostOnce)
            let will = MQTTWill(topic: "status/silent", payload: Array("gone".utf8), qos: .atMostOnce)
            var silent = try await RawMQTTClient.connected(
                port: broker.port,
                clientID: "silent",
                keepAlive: 1,
                will: will
            )
            await broker.parked.waitUntil(count: 2)
            await ManualBrokerClock.advance(clock, by: .milliseconds(1750))
            guard case .publish(let publish) = try await watcher.receivePacket(timeout: .seconds(5)) else {
                Issue.record("expected the will")
                return
            }
            #expect(publish.topic == "status/silent")
            #expect(await silent.isClosedByPeer())
        }
    }

    /// A wait for a count that never comes ends with its task, so a time limit can end the test.
    @Test func aWaitForAParkedCountEndsWhenItsTaskIsCancelled() async throws {
        try await MQTTBroker.withRunning { broker in
            let wait = Task { await broker.parked.waitUntil(count: 5) }
            wait.cancel()
            await wait.value
            let cancelledFirst = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                await broker.parked.waitUntil(count: 5)
            }
            await cancelledFirst.value
        }
    }

    @Test func stoppingTheBrokerEndsParkedConnections() async throws {
        let broker = try MQTTBroker.bind()
        let events = broker.events()
        var clients: [RawMQTTClient] = []
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await broker.run() }
            for index in 0..<5 {
                clients.append(try await RawMQTTClient.connected(port: broker.port, clientID: "c\(index)"))
            }
            await broker.parked.waitUntil(count: 5)
            group.cancelAll()
            for index in clients.indices { #expect(await clients[index].isClosedByPeer(timeout: .seconds(5))) }
            await #expect(throws: CancellationError.self) { try await group.next() }
        }
        var stopped = 0
        for await event in events {
            if case .clientDisconnected(_, let reason) = event, reason == "broker stopping" { stopped += 1 }
        }
        #expect(stopped == 5)
        #expect(broker.parked.count == 0)
    }
}
