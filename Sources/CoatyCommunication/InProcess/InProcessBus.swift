import CoatyCore
public import CoatyTransport
import Synchronization

/// A message switch shared by the agents of one process: several ``InProcessTransport``s on the same
/// bus talk to each other with MQTT topic-filter semantics (`+`, `#`) and no broker.
///
/// Like an MQTT broker it delivers each message once per connection whose subscriptions match,
/// publishes a connection's last will when the connection ends abruptly, keeps retained messages,
/// and disconnects an older connection when a new one uses the same client id.
public final class InProcessBus: Sendable {
    /// One connection. A class, so that routing a message takes one reference per receiver instead of
    /// copying every field.
    final class Session: Sendable {
        let id: UInt64
        let clientID: String
        let will: TransportMessage?
        let onMessage: @Sendable (TransportMessage) -> Void
        let closed = OneShotSignal()

        init(
            id: UInt64,
            clientID: String,
            will: TransportMessage?,
            onMessage: @escaping @Sendable (TransportMessage) -> Void
        ) {
            self.id = id
            self.clientID = clientID
            self.will = will
            self.onMessage = onMessage
        }
    }

    /// An open connection and its subscriptions.
    struct Subscriber: Sendable {
        let session: Session
        var filters: [TopicFilter] = []
    }

    struct State: Sendable {
        /// The open connections in the order they connected, which is the order of their ids: a
        /// message is delivered in that order, and an array is walked without hashing or sorting.
        var subscribers: [Subscriber] = []
        /// Keyed by the topic's UTF-8 bytes: MQTT compares topics byte for byte, while `String` keys would
        /// make canonically equivalent spellings ("caf\u{E9}", "cafe\u{301}") one topic.
        var retained: [[UInt8]: TransportMessage] = [:]
        var nextID: UInt64 = 0
        var taps: [UInt64: AsyncStream<TransportMessage>.Continuation] = [:]

        /// The position of the connection with `id`, found by binary search over the ascending ids.
        func index(of id: UInt64) -> Int? {
            var low = 0
            var high = self.subscribers.count
            while low < high {
                let middle = (low + high) / 2
                let candidate = self.subscribers[middle].session.id
                if candidate == id { return middle }
                if candidate < id { low = middle + 1 } else { high = middle }
            }
            return nil
        }

        mutating func remove(_ id: UInt64) -> Session? {
            guard let index = self.index(of: id) else { return nil }
            return self.subscribers.remove(at: index).session
        }
    }

    let state = Mutex(State())

    /// Creates an empty bus.
    public init() {}

    /// The client ids of the open connections, sorted.
    public var clientIDs: [String] {
        self.state.withLock { $0.subscribers.map(\.session.clientID).sorted() }
    }

    /// Every message published on the bus from now on, in publication order, including wills:
    /// a tap for tests and tools. Buffers up to `bufferSize` messages (newest kept).
    public func messages(bufferSize: Int = 10_000) -> AsyncStream<TransportMessage> {
        let (stream, continuation) = AsyncStream<TransportMessage>.makeStream(
            bufferingPolicy: .bufferingNewest(max(1, bufferSize))
        )
        let id = self.state.withLock { state -> UInt64 in
            state.nextID += 1
            state.taps[state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.taps.removeValue(forKey: id) } }
        return stream
    }

    /// Ends the connection of `clientID` abruptly, as a network failure would: its last will is
    /// published and its ``InProcessTransport/withConnection(_:onMessage:_:)`` throws
    /// `TransportError` with code `.connectionLost`.
    ///
    /// - Returns: Whether a connection with that client id was open.
    @discardableResult
    public func dropConnection(clientID: String) -> Bool {
        let session = self.state.withLock { state -> Session? in
            guard let index = state.subscribers.firstIndex(where: { $0.session.clientID == clientID }) else {
                return nil
            }
            return state.subscribers.remove(at: index).session
        }
        guard let session else { return false }
        session.closed.fire()
        if let will = session.will { self.publish(will) }
        return true
    }

    func connect(
        clientID: String,
        will: TransportMessage?,
        onMessage: @escaping @Sendable (TransportMessage) -> Void
    ) -> Session {
        let (session, takenOver) = self.state.withLock { state -> (Session, Session?) in
            var takenOver: Session?
            if let index = state.subscribers.firstIndex(where: { $0.session.clientID == clientID }) {
                takenOver = state.subscribers.remove(at: index).session
            }
            state.nextID += 1
            let session = Session(id: state.nextID, clientID: clientID, will: will, onMessage: onMessage)
            state.subscribers.append(Subscriber(session: session))
            return (session, takenOver)
        }
        if let takenOver {
            takenOver.closed.fire()
            if let will = takenOver.will { self.publish(will) }
        }
        return session
    }

    /// Closes a session. Returns `false` if it was already gone (dropped or taken over).
    func disconnect(_ session: Session, graceful: Bool) -> Bool {
        let removed = self.state.withLock { $0.remove(session.id) }
        guard let removed else { return false }
        removed.closed.fire()
        if !graceful, let will = removed.will { self.publish(will) }
        return true
    }

    func subscribe(_ session: Session, to filters: [TopicFilter]) throws(TransportError) {
        let retained = try self.state.withLock { state throws(TransportError) -> [TransportMessage] in
            guard let index = state.index(of: session.id) else {
                throw TransportError(.connectionClosed, "the in-process connection is closed")
            }
            // Mutated in place through the array's element, so the filter list is not copied.
            for filter in filters where !state.subscribers[index].filters.contains(filter) {
                state.subscribers[index].filters.append(filter)
            }
            guard !state.retained.isEmpty else { return [] }
            return state.retained.values.filter { message in filters.contains { $0.matches(message.topic) } }
                .sorted { $0.topic < $1.topic }
        }
        for message in retained { session.onMessage(message) }
    }

    func unsubscribe(_ session: Session, from filters: [TopicFilter]) throws(TransportError) {
        try self.state.withLock { state throws(TransportError) in
            guard let index = state.index(of: session.id) else {
                throw TransportError(.connectionClosed, "the in-process connection is closed")
            }
            state.subscribers[index].filters.removeAll { filters.contains($0) }
        }
    }

    /// The filters `clientID`'s connection is subscribed to, in subscription order: for tests.
    func filters(ofClientID clientID: String) -> [TopicFilter] {
        self.state.withLock { state in
            state.subscribers.first { $0.session.clientID == clientID }?.filters ?? []
        }
    }

    /// Delivers `message` to every session with a matching subscription, once per session.
    ///
    /// - Parameter sender: The publishing session; when given and no longer connected, nothing is
    ///   published.
    /// - Returns: `false` if `sender` is no longer connected.
    @discardableResult
    func publish(_ message: TransportMessage, from sender: Session? = nil) -> Bool {
        // Most messages have one receiver (a request's responder, a response's requester): it is
        // kept apart, so routing such a message allocates no array.
        let delivery = self.state.withLock { state -> Receivers? in
            if let sender, state.index(of: sender.id) == nil { return nil }
            if message.retain {
                if message.payload.isEmpty {
                    state.retained[Array(message.topic.utf8)] = nil
                } else {
                    var stored = message
                    stored.retain = true
                    state.retained[Array(message.topic.utf8)] = stored
                }
            }
            var receivers = Receivers()
            for subscriber in state.subscribers where subscriber.filters.contains(where: { $0.matches(message.topic) })
            {
                receivers.append(subscriber.session)
            }
            if !state.taps.isEmpty { receivers.taps = Array(state.taps.values) }
            return receivers
        }
        guard let delivery else { return false }
        for tap in delivery.taps { tap.yield(message) }
        guard let first = delivery.first else { return true }
        var delivered = message
        delivered.retain = false
        first.onMessage(delivered)
        for receiver in delivery.others { receiver.onMessage(delivered) }
        return true
    }

    /// The sessions a message goes to, in connection order, and the taps.
    ///
    /// It keeps the first session apart, as `InlineList` does, but with its own two fields, which is
    /// faster on this path than routing through `InlineList`.
    struct Receivers {
        var first: Session?
        var others: [Session] = []
        var taps: [AsyncStream<TransportMessage>.Continuation] = []

        mutating func append(_ session: Session) {
            if self.first == nil { self.first = session } else { self.others.append(session) }
        }
    }
}
