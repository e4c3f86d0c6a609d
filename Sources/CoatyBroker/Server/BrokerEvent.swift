/// Something that happened in an ``MQTTBroker``, for monitoring (for example `coaty broker --verbose`).
///
/// Per-message traffic is not reported here (it would cost on the hot path); it is logged at `.debug`
/// through ``MQTTBroker/Configuration/logger``.
public enum BrokerEvent: Sendable, Hashable {
    /// A client completed CONNECT.
    case clientConnected(clientID: String, remoteAddress: String, cleanSession: Bool)
    /// A client's connection ended; `reason` says how (DISCONNECT, lost, protocol violation, timeout…).
    case clientDisconnected(clientID: String, reason: String)
    /// A client subscribed to filters (after the SUBACK was queued).
    case subscribed(clientID: String, filters: [String])
    /// A client unsubscribed from filters.
    case unsubscribed(clientID: String, filters: [String])
}

/// The stream of ``BrokerEvent``s returned by ``MQTTBroker/events()``.
///
/// It buffers the newest 1,000 events for a slow consumer and drops older ones. It finishes when the
/// broker's ``MQTTBroker/run()`` returns, or immediately if the broker has already stopped.
public struct BrokerEvents: AsyncSequence, Sendable {
    /// The element type.
    public typealias Element = BrokerEvent
    /// Iteration never throws.
    public typealias Failure = Never

    let base: AsyncStream<BrokerEvent>

    /// The iterator of a ``BrokerEvents`` stream.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<BrokerEvent>.AsyncIterator

        /// The next event, or `nil` once the broker stopped. Suspends until an event arrives;
        /// cancellation ends the iteration with `nil`.
        public mutating func next() async -> BrokerEvent? {
            await self.base.next()
        }

        /// The next event, or `nil` once the broker stopped, on the caller's isolation.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> BrokerEvent? {
            await self.base.next(isolation: actor)
        }
    }

    /// Creates the iterator.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: self.base.makeAsyncIterator())
    }
}
