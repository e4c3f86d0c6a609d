import BenchmarkSupport
import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyModel
import CoatyTransport
import Foundation
import Synchronization

/// Advertise events published back to back by one agent and observed by another through a broker,
/// beside `mosquitto_pub -l` / `mosquitto_sub` sending the very same messages (topic and payloads,
/// recorded from the agents' first run).
struct AdvertiseBurst {
    /// Whether `task` ends within `timeout`.
    private static func finished(_ task: Task<Bool, Never>, within timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                _ = await task.value
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
    }

    let count: Int
    let objects: [CoatyObject]

    init(count: Int) {
        self.count = count
        self.objects = (0...count).map { index in
            CoatyObject(
                objectType: "coaty.CoatyObject",
                name: index == count ? "end" : "Sensor \(index)",
                externalID: "ext-\(index)",
                customProperties: [
                    "floor": .int(index % 12), "unit": "Cel", "value": .double(21.5 + Double(index % 7)),
                    "tags": ["temperature", "indoor", "calibrated"],
                    "history": .array((0..<16).map { .double(20 + Double($0) / 10) }),
                    "location": ["building": "B7", "room": "2.041"],
                    "description": .string(String(repeating: "A sensor of the burst benchmark. ", count: 4)),
                ]
            )
        }
    }

    /// The messages an agent's Advertises went out as, recorded by a bare subscriber.
    final class Recording: Sendable {
        private let state = Mutex((topic: "", payloads: [[UInt8]]()))

        var topic: String { self.state.withLock { $0.topic } }
        var payloads: [[UInt8]] { self.state.withLock { $0.payloads } }
        var count: Int { self.state.withLock { $0.payloads.count } }

        func record(_ message: TransportMessage) {
            self.state.withLock {
                $0.topic = message.topic
                $0.payloads.append(message.payload)
            }
        }
    }

    /// One run: the seconds from the first `publish` until the observer has all `count` events (a last
    /// event marks the end, so a loss shows as a count below `count` instead of a hang), and how many
    /// arrived. With `recording`, a bare connection records every message the publisher sent.
    func runAgents(transport: MQTTTransport, recording: Recording? = nil) async throws -> (Double, Int) {
        let publisher = CommunicationManager(
            transport: transport,
            configuration: .init(identity: Identity(name: "publisher"))
        )
        let observer = CommunicationManager(
            transport: transport,
            configuration: .init(identity: Identity(name: "observer"), observerBufferSize: self.count + 1)
        )
        let recorder: ScopedConnection? =
            if let recording {
                try await ScopedConnection.open(transport, clientID: "recorder") { recording.record($0) }
            } else { nil }
        try await recorder?.connection.subscribe(to: [TopicFilter("coaty/3/+/ADV:CoatyObject/+")])
        return try await withThrowingTaskGroup(of: Void.self) { group in
            for agent in [publisher, observer] {
                let states = agent.observeCommunicationState()
                group.addTask { try await agent.run() }
                for await state in states where state == .online { break }
            }
            let advertises = await observer.observeAdvertise(coreType: .coatyObject)
            let received = ReceivedCount()
            let start = ContinuousClock.now
            // A broker may drop messages for a subscriber that falls behind: then the end marker may
            // never come, and the run ends once nothing has arrived for 5 s.
            let counting = Task {
                for await advertise in advertises {
                    if advertise.object.name == "end" { return true }
                    received.value.add(1, ordering: .relaxed)
                }
                return false
            }
            group.addTask {
                for object in self.objects { try await publisher.publish(AdvertiseEvent(object)) }
            }
            var last = (count: -1, at: start)
            while !(await Self.finished(counting, within: .milliseconds(100))) {
                let now = ContinuousClock.now
                let count = received.value.load(ordering: .relaxed)
                if count != last.count {
                    last = (count, now)
                } else if now - last.at > .seconds(5) {
                    counting.cancel()
                    break
                }
            }
            let complete = await counting.value
            let elapsed = seconds((complete ? ContinuousClock.now : last.at) - start)
            publisher.finish()
            observer.finish()
            try await group.waitForAll()
            if let recording {
                let deadline = ContinuousClock.now + .seconds(10)
                while recording.count <= self.count, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            try await recorder?.close()
            return (elapsed, received.value.load(ordering: .relaxed))
        }
    }
}

/// The events an observer has received so far.
private final class ReceivedCount: Sendable {
    let value = Atomic<Int>(0)
}
