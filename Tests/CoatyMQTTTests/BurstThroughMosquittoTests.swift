import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyModel
import TestSupport
import Testing

/// An agent that publishes far more than its outbox holds while online loses nothing: `publish`
/// waits for room instead of dropping (issue 21: 11,424 of 20,000 arrived before).
@Suite(.enabled(if: Mosquitto.isAvailable, "mosquitto is not installed"), .timeLimit(.minutes(2)))
struct BurstThroughMosquittoTests {
    /// 20,000 Advertise events of a custom object type (two topics each) published back to back by
    /// one agent all arrive at another, in order, through mosquitto; the publisher reports no drop.
    @Test func twentyThousandCustomAdvertisesArriveWhole() async throws {
        let count = 20_000
        try await Mosquitto.withRunning { broker in
            let transport = MQTTTransport(configuration: .init(brokerURL: broker.url, connectTimeout: .seconds(5)))
            let publisher = CommunicationManager(
                transport: transport,
                configuration: .init(identity: Identity(name: "publisher"))
            )
            // The observer's own buffer is a separate, documented bound: make it hold the whole burst,
            // so that only the publishing side is under test.
            let observer = CommunicationManager(
                transport: transport,
                configuration: .init(identity: Identity(name: "observer"), observerBufferSize: count)
            )
            let diagnostics = publisher.observeDiagnostics()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for manager in [publisher, observer] {
                    let states = manager.observeCommunicationState()
                    group.addTask { try await manager.run() }
                    for await state in states where state == .online { break }
                }
                let advertises = try await observer.observeAdvertise(objectType: "com.example.Burst")
                group.addTask {
                    // A last event marks the end, so that a loss fails the test instead of hanging it.
                    for index in 0...count {
                        let name = index == count ? "end" : "\(index)"
                        try await publisher.publish(
                            AdvertiseEvent(CoatyObject(objectType: "com.example.Burst", name: name))
                        )
                    }
                }
                var received = 0
                var inOrder = true
                for await advertise in advertises {
                    if advertise.object.name == "end" { break }
                    if advertise.object.name != "\(received)" { inOrder = false }
                    received += 1
                }
                #expect(received == count)
                #expect(inOrder)
                publisher.finish()
                observer.finish()
                try await group.waitForAll()
            }
            var dropped = 0
            for await diagnostic in diagnostics where diagnostic.kind == .droppedPublication { dropped += 1 }
            #expect(dropped == 0)
        }
    }
}
