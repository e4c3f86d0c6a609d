public import CoatyCore

/// A way for a `CommunicationManager` to reach other agents: MQTT over TCP, an in-process bus, or
/// anything else with publish/subscribe and MQTT topic-filter semantics.
///
/// A transport opens one connection at a time with ``withConnection(_:onMessage:_:)``. The manager
/// owns reconnecting, re-subscribing, re-joining and the offline queue, so a transport only has to
/// provide one connection's lifetime. Implement it to plug in another broker protocol.
public protocol Transport: Sendable {
    /// Opens a connection, runs `body` with it, and closes it when `body` returns or throws.
    ///
    /// - Parameters:
    ///   - options: The client identity and last will for this connection.
    ///   - onMessage: Called for every message received on an active subscription, in the order of
    ///     arrival, synchronously from the transport's receive path. It must not block: our MQTT
    ///     transport calls it on the process's socket thread (the reactor) for small reads, where
    ///     every connection's traffic waits while it runs.
    ///   - body: Works with the open connection. When the connection is lost while `body` runs, every
    ///     pending and later operation on the connection throws, ``TransportConnection/waitUntilClosed()``
    ///     returns, and once `body` has ended `withConnection` throws a ``TransportError`` with code
    ///     `.connectionLost`. (A transport cannot cancel its caller's task from inside, and `body` is not
    ///     `Sendable`, so it cannot run in a child task: `body` ends through those errors or by awaiting
    ///     `waitUntilClosed()`.)
    /// - Returns: What `body` returns, after a graceful close (MQTT: DISCONNECT, so the broker discards
    ///   the last will).
    /// - Throws: ``TransportError`` when the connection cannot be opened or is lost; what `body` throws.
    ///   When the task is cancelled the connection is closed without a graceful DISCONNECT.
    func withConnection<Result: Sendable>(
        _ options: TransportConnectOptions,
        onMessage: @escaping @Sendable (TransportMessage) -> Void,
        _ body: (any TransportConnection) async throws -> Result
    ) async throws -> Result
}

/// An open connection of a ``Transport``.
public protocol TransportConnection: Sendable {
    /// Publishes a message. Returns once the message has been handed to the network (QoS 0) or
    /// acknowledged (QoS 1 and 2).
    ///
    /// - Throws: ``TransportError`` if the connection is closed or lost.
    func publish(_ message: TransportMessage) async throws

    /// Hands a message to the connection without suspending, if that is possible right now.
    ///
    /// The manager calls it from the publishing task, so a publication on an idle connection does not
    /// wait for the manager's send loop: this is what keeps a request/response round trip short. A
    /// message it hands over must be in order with every earlier ``publish(_:)`` of the same caller,
    /// exactly as if ``publish(_:)`` had been called.
    ///
    /// - Returns: `true` if the message was handed over; `false` if it has to go through
    ///   ``publish(_:)`` instead (for example when it must wait for an acknowledgement or for buffer
    ///   space). The default implementation returns `false`, so a transport that only implements
    ///   ``publish(_:)`` still works, with one more task hand-off per publication.
    /// - Throws: ``TransportError`` if the connection is closed or lost, or the message is invalid.
    ///   The manager then queues the message for ``publish(_:)``, which reports the same error.
    func publishWithoutWaiting(_ message: TransportMessage) throws -> Bool

    /// Subscribes to topic filters, all in one request. Returns once the subscription is in place, so
    /// messages published afterwards are received.
    ///
    /// - Throws: ``TransportError`` if the connection is closed or lost, or the peer refuses a filter.
    func subscribe(to filters: [TopicFilter]) async throws

    /// Unsubscribes from topic filters. Returns once the peer has confirmed.
    ///
    /// - Throws: ``TransportError`` if the connection is closed or lost.
    func unsubscribe(from filters: [TopicFilter]) async throws

    /// Hands a subscription to the connection without suspending or waiting for the peer's
    /// confirmation, if that is possible right now.
    ///
    /// The manager calls it only for a request's response filters, from the requesting task, right
    /// before it publishes the request on the same connection, as coaty-js does: a peer that handles a
    /// connection's packets in order (an MQTT broker does) has the subscription in place before the
    /// request reaches a responder, so no response can be missed, and the request does not wait a
    /// round trip for the confirmation. It must be in order with every later call on the same
    /// connection.
    ///
    /// - Returns: `true` if the subscription was handed over; `false` if it has to go through
    ///   ``subscribe(to:)`` instead. The default implementation returns `false`.
    /// - Throws: ``TransportError`` if the connection is closed or lost.
    func subscribeWithoutWaiting(to filters: [TopicFilter]) throws -> Bool

    /// Hands an unsubscription to the connection without suspending or waiting for the peer's
    /// confirmation, if that is possible right now.
    ///
    /// The manager calls it when a request's response stream ends, from the task that ends it, so the
    /// response subscription is released at once, as coaty-js releases it, instead of being queued for
    /// the manager's send loop. It must be in order with every earlier call on the same connection.
    ///
    /// - Returns: `true` if the unsubscription was handed over; `false` if it has to go through
    ///   ``unsubscribe(from:)`` instead. The default implementation returns `false`.
    /// - Throws: ``TransportError`` if the connection is closed or lost. The manager then queues the
    ///   unsubscription for ``unsubscribe(from:)``.
    func unsubscribeWithoutWaiting(from filters: [TopicFilter]) throws -> Bool

    /// Runs `body`, which hands packets to this connection without waiting (the `…WithoutWaiting`
    /// calls), so that they can leave together instead of one write each.
    ///
    /// The manager hands a request's response subscription and the request itself over inside one
    /// such call: a broker then reads both at once instead of waking for each. `body` must not block.
    /// The default implementation only runs `body`.
    func coalescingWrites<Result>(_ body: () throws -> Result) rethrows -> Result

    /// Suspends until this connection is closed or lost, or the calling task is cancelled.
    ///
    /// The manager uses it to notice a lost connection while it has nothing to send. It must return
    /// promptly when the calling task is cancelled. The default implementation only returns on
    /// cancellation; a transport whose connections can be lost must implement it.
    func waitUntilClosed() async
}

extension TransportConnection {
    /// Returns `false`: every message goes through ``publish(_:)``.
    public func publishWithoutWaiting(_ message: TransportMessage) throws -> Bool { false }

    /// Returns `false`: every subscription goes through ``subscribe(to:)``.
    public func subscribeWithoutWaiting(to filters: [TopicFilter]) throws -> Bool { false }

    /// Returns `false`: every unsubscription goes through ``unsubscribe(from:)``.
    public func unsubscribeWithoutWaiting(from filters: [TopicFilter]) throws -> Bool { false }

    /// Runs `body`.
    public func coalescingWrites<Result>(_ body: () throws -> Result) rethrows -> Result {
        try body()
    }

    /// Suspends until the calling task is cancelled.
    public func waitUntilClosed() async {
        let (stream, continuation) = AsyncStream<Never>.makeStream()
        // Iterating an AsyncStream ends when the iterating task is cancelled.
        for await _ in stream {}
        continuation.finish()
    }
}

/// What a ``Transport`` needs to know to open one connection.
public struct TransportConnectOptions: Sendable, Hashable {
    /// The client identifier. Coaty uses `"Coaty"` followed by the first 18 hex digits of the agent's
    /// identity id.
    public var clientID: String
    /// The message the peer publishes when this connection ends without a graceful close.
    public var lastWill: TransportMessage?
    /// The logger of whoever opens the connection (the communication manager passes its own), for a
    /// transport that was not given one of its own. Not part of equality.
    public var logger: CoatyLogger?

    /// Creates options.
    public init(clientID: String, lastWill: TransportMessage? = nil, logger: CoatyLogger? = nil) {
        self.clientID = clientID
        self.lastWill = lastWill
        self.logger = logger
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.clientID == rhs.clientID && lhs.lastWill == rhs.lastWill
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.clientID)
        hasher.combine(self.lastWill)
    }
}
