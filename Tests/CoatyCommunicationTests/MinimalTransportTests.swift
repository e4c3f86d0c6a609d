import CoatyCommunication
import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Synchronization
import Testing

/// A transport written as a user writes one: it implements only `withConnection`, `publish`,
/// `subscribe` and `unsubscribe`, and takes the defaults for the requirements that hand work over
/// without waiting and for `waitUntilClosed()`.
@Suite(.timeLimit(.minutes(1)))
struct MinimalTransportTests {
    @Test func managersTalkThroughATransportThatImplementsOnlyTheRequiredMethods() async throws {
        let hub = MinimalHub()
        let managers = (0..<2).map { index in
            CommunicationManager(
                transport: MinimalTransport(hub: hub),
                configuration: .init(identity: Identity(name: "Agent \(index)"))
            )
        }
        try await withOnline(managers) {
            // One-way: Advertise.
            let advertises = try await managers[1].observeAdvertise(objectType: "com.example.Thing")
            let thing = CoatyObject(objectType: "com.example.Thing", name: "Thing42")
            try await managers[0].publish(AdvertiseEvent(thing))
            #expect(try await advertises.first(timeout: .seconds(5)).object.objectID == thing.objectID)

            // Request/response: the response subscription goes through `subscribe(to:)`, its release
            // through `unsubscribe(from:)`.
            let identityID = managers[0].identity.objectID
            let resolve = try await managers[1].discover(.byObjectID(identityID)).first(timeout: .seconds(5))
            #expect(resolve.object?.objectID == identityID)
        }
    }
}

/// Routes every published message to the connections whose subscriptions match its topic.
final class MinimalHub: Sendable {
    private struct Subscriber {
        var filters: Set<TopicFilter> = []
        let deliver: @Sendable (TransportMessage) -> Void
    }

    private let subscribers = Mutex<[Int: Subscriber]>([:])
    private let nextID = Atomic<Int>(0)

    func open(_ deliver: @escaping @Sendable (TransportMessage) -> Void) -> Int {
        let id = self.nextID.add(1, ordering: .relaxed).newValue
        self.subscribers.withLock { $0[id] = Subscriber(deliver: deliver) }
        return id
    }

    func close(_ id: Int) { _ = self.subscribers.withLock { $0.removeValue(forKey: id) } }

    func subscribe(_ id: Int, to filters: [TopicFilter]) {
        self.subscribers.withLock { $0[id]?.filters.formUnion(filters) }
    }

    func unsubscribe(_ id: Int, from filters: [TopicFilter]) {
        self.subscribers.withLock { $0[id]?.filters.subtract(filters) }
    }

    func publish(_ message: TransportMessage) {
        let receivers = self.subscribers.withLock { subscribers in
            subscribers.values.filter { $0.filters.contains { $0.matches(message.topic) } }.map(\.deliver)
        }
        for deliver in receivers { deliver(message) }
    }
}

/// A ``Transport`` over a ``MinimalHub``.
struct MinimalTransport: Transport {
    let hub: MinimalHub

    func withConnection<Result: Sendable>(
        _ options: TransportConnectOptions,
        onMessage: @escaping @Sendable (TransportMessage) -> Void,
        _ body: (any TransportConnection) async throws -> Result
    ) async throws -> Result {
        let id = self.hub.open(onMessage)
        defer { self.hub.close(id) }
        return try await body(Connection(hub: self.hub, id: id))
    }

    struct Connection: TransportConnection {
        let hub: MinimalHub
        let id: Int

        func publish(_ message: TransportMessage) async throws { self.hub.publish(message) }

        func subscribe(to filters: [TopicFilter]) async throws { self.hub.subscribe(self.id, to: filters) }

        func unsubscribe(from filters: [TopicFilter]) async throws { self.hub.unsubscribe(self.id, from: filters) }
    }
}
