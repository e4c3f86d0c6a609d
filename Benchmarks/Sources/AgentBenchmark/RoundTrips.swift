import BenchmarkSupport
import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyModel
import CoatyTransport
import Synchronization

/// Round trips through a broker: Call → Return between two agents, and the same exchange as a bare
/// MQTT request/response ping-pong between two connections of our client.
///
/// Each kind keeps its two ends connected for the whole benchmark and measures in rounds, so that the
/// kinds and brokers can be alternated round by round.
protocol RoundTripper: Sendable {
    /// `count` round trips, each timed in seconds.
    func measure(_ count: Int) async throws -> [Double]
    /// Disconnects both ends.
    func close() async throws
}

/// The operation, parameters and answer of every Call in the benchmark.
enum Greeting {
    static let operation = "com.example.greet"

    static func call(_ index: Int) throws -> CallEvent {
        try CallEvent(operation: Self.operation, parameters: ["name": "Ada", "index": .int(index)])
    }

    /// The encoded sizes of the Call's and the Return's payloads, for the ping-pong's messages.
    static func payloadSizes() throws -> (call: Int, return: Int) {
        let encoder = CoatyJSONEncoder()
        let call: AnyCodable = ["parameters": ["name": "Ada", "index": .int(1_000)]]
        let answer: AnyCodable = ["result": "Hello, Ada!"]
        return (try encoder.encode(call).count, try encoder.encode(answer).count)
    }
}

/// Call → Return between a caller and a callee agent, each with its own connection; the callee
/// answers in a handler (`handleCalls`). A round trip is timed from `call(_:)` to `first(timeout:)`
/// returning: the response subscription, the Call, the Return and the release of the subscription.
final class CoatyRoundTripper: RoundTripper {
    private let caller: CommunicationManager
    private let callee: CommunicationManager
    private let runs: Mutex<[Task<Void, any Error>]>
    private let registration: EventHandlerRegistration

    init(transport: any Transport) async throws {
        self.caller = CommunicationManager(
            transport: transport,
            configuration: .init(identity: Identity(name: "caller"))
        )
        self.callee = CommunicationManager(
            transport: transport,
            configuration: .init(identity: Identity(name: "callee"))
        )
        var runs: [Task<Void, any Error>] = []
        for agent in [self.caller, self.callee] {
            let states = agent.observeCommunicationState()
            runs.append(Task { try await agent.run() })
            for await state in states where state == .online { break }
        }
        self.runs = Mutex(runs)
        self.registration = try await self.callee.handleCalls(Greeting.operation) { call in
            try call.returnResult(.string("Hello, \(call.parameter(named: "name")?.stringValue ?? "")!"))
        }
    }

    func measure(_ count: Int) async throws -> [Double] {
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        for index in 0..<count {
            let start = ContinuousClock.now
            let returns = try await self.caller.call(try Greeting.call(index))
            _ = try await returns.first(timeout: .seconds(5))
            latencies.append(seconds(ContinuousClock.now - start))
        }
        return latencies
    }

    func close() async throws {
        self.registration.cancel()
        self.caller.finish()
        self.callee.finish()
        for run in self.runs.withLock({ $0 }) { try await run.value }
    }
}

/// A bare request/response ping-pong between two connections of our MQTT client through the broker,
/// with payloads of the Call's and Return's sizes and no Coaty events: the responder answers each ping
/// from its message handler, the requester publishes the next ping when the pong has arrived.
final class RawRoundTripper: RoundTripper {
    /// What each exchange makes the broker do besides the ping and the pong.
    enum Shape: Sendable {
        /// Nothing: one response topic, subscribed once.
        case plain
        /// The broker traffic the Coaty protocol makes for a request, written as our manager writes
        /// it: the requester subscribes a response topic of the exchange's own, publishes the ping and
        /// releases the previous exchange's response topic in one write.
        case subscribingPerRequest
        /// The same subscriptions and releases, but off the exchange's path: the ping goes out alone
        /// on a response topic subscribed during the previous exchange, and the next exchange's
        /// subscription and the previous one's release follow it in a second write. Our manager does
        /// not do this (a request's correlation id would have to be chosen before it is made); the
        /// series shows what the protocol's subscriptions would cost then.
        case subscribedAhead
    }

    private let requester: ScopedConnection
    private let responder: ScopedConnection
    private let pongs: AsyncStream<Void>
    private let prefix: String
    private let pingPayload: [UInt8]
    private let shape: Shape
    private let exchanges = Atomic<Int>(0)
    /// The response topic of the last exchange, released with the next one's write.
    private let heldRelease = Mutex<TopicFilter?>(nil)

    init(transport: MQTTTransport, name: String, shape: Shape = .plain) async throws {
        let sizes = try Greeting.payloadSizes()
        let prefix = "bench/\(name)"
        self.prefix = prefix
        self.shape = shape
        self.pingPayload = [UInt8](repeating: 0x61, count: sizes.call)
        let pongPayload = [UInt8](repeating: 0x62, count: sizes.return)
        let (pongs, arrived) = AsyncStream.makeStream(of: Void.self)
        self.pongs = pongs
        let answering = Mutex<(any TransportConnection)?>(nil)
        // A ping on `<prefix>/ping/<n>` is answered on `<prefix>/pong/<n>`.
        self.responder = try await ScopedConnection.open(transport, clientID: "\(name)-responder") { ping in
            let pong = TransportMessage(
                topic: prefix + "/pong/" + ping.topic.dropFirst(prefix.count + 6),
                payload: pongPayload
            )
            guard let connection = answering.withLock({ $0 }), (try? connection.publishWithoutWaiting(pong)) == true
            else { return print("the responder could not answer a ping") }
        }
        let responder = self.responder
        answering.withLock { $0 = responder.connection }
        try await responder.connection.subscribe(to: [TopicFilter(prefix + "/ping/+")])
        let requester = try await ScopedConnection.open(transport, clientID: "\(name)-requester") { _ in
            arrived.yield()
        }
        switch shape {
        case .plain: try await requester.connection.subscribe(to: [TopicFilter(prefix + "/pong/0")])
        case .subscribingPerRequest: break
        case .subscribedAhead: try await requester.connection.subscribe(to: [TopicFilter(prefix + "/pong/1")])
        }
        self.requester = requester
    }

    func measure(_ count: Int) async throws -> [Double] {
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        var iterator = self.pongs.makeAsyncIterator()
        let connection = self.requester.connection
        for _ in 0..<count {
            let start = ContinuousClock.now
            switch self.shape {
            case .plain:
                try await connection.publish(
                    TransportMessage(topic: self.prefix + "/ping/0", payload: self.pingPayload)
                )
            case .subscribingPerRequest:
                let exchange = self.exchanges.add(1, ordering: .relaxed).newValue
                let ping = TransportMessage(topic: "\(self.prefix)/ping/\(exchange)", payload: self.pingPayload)
                let response = try TopicFilter("\(self.prefix)/pong/\(exchange)")
                let release = self.heldRelease.withLock { held in Self.replacing(&held, with: response) }
                try self.handOver {
                    try connection.coalescingWrites {
                        try connection.subscribeWithoutWaiting(to: [response]) && connection.publishWithoutWaiting(ping)
                            && connection.unsubscribeWithoutWaiting(from: release.map { [$0] } ?? [])
                    }
                }
            case .subscribedAhead:
                let exchange = self.exchanges.add(1, ordering: .relaxed).newValue
                let ping = TransportMessage(topic: "\(self.prefix)/ping/\(exchange)", payload: self.pingPayload)
                let next = try TopicFilter("\(self.prefix)/pong/\(exchange + 1)")
                let current = try TopicFilter("\(self.prefix)/pong/\(exchange)")
                let release = self.heldRelease.withLock { held in Self.replacing(&held, with: current) }
                try self.handOver { try connection.publishWithoutWaiting(ping) }
                try self.handOver {
                    try connection.coalescingWrites {
                        try connection.subscribeWithoutWaiting(to: [next])
                            && connection.unsubscribeWithoutWaiting(from: release.map { [$0] } ?? [])
                    }
                }
            }
            guard await iterator.next() != nil else { throw BenchmarkError("the ping-pong ended") }
            latencies.append(seconds(ContinuousClock.now - start))
        }
        return latencies
    }

    /// Stores `value` in `held` and returns what it held.
    private static func replacing(_ held: inout TopicFilter?, with value: TopicFilter) -> TopicFilter? {
        defer { held = value }
        return held
    }

    /// Runs a hand-over to the connection that must not be refused.
    private func handOver(_ body: () throws -> Bool) throws {
        guard try body() else { throw BenchmarkError("the requester could not hand the ping over") }
    }

    func close() async throws {
        try await self.requester.close()
        try await self.responder.close()
    }
}

/// A transport connection held open outside `withConnection`'s scope, so that measurements can be
/// interleaved: the scope runs in a task that waits until ``close()``.
struct ScopedConnection: Sendable {
    let connection: any TransportConnection
    private let release: AsyncStream<Void>.Continuation
    private let scope: Task<Void, any Error>

    static func open(
        _ transport: MQTTTransport,
        clientID: String,
        onMessage: @escaping @Sendable (TransportMessage) -> Void
    ) async throws -> ScopedConnection {
        let (opened, announce) = AsyncStream.makeStream(of: (any TransportConnection).self)
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let scope = Task {
            defer { announce.finish() }
            try await transport.withConnection(.init(clientID: clientID), onMessage: onMessage) { connection in
                announce.yield(connection)
                for await _ in released {}
            }
        }
        guard let connection = await opened.first(where: { _ in true }) else {
            try await scope.value
            throw BenchmarkError("\(clientID) did not connect")
        }
        return ScopedConnection(connection: connection, release: release, scope: scope)
    }

    func close() async throws {
        self.release.finish()
        try await self.scope.value
    }
}
