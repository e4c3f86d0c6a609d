import CoatyCore
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
        var sessions: [UInt64: Subscriber] = [:]
        var retained: [String: TransportMessage] = [:]
        var nextID: UInt64 = 0
        var taps: [UInt64: AsyncStream<TransportMessage>.Continuation] = [:]
    }

    let state = Mutex(State())

    /// Creates an empty bus.
    public init() {}

    /// The client ids of the open connections, sorted.
    public var clientIDs: [String] {
        self.state.withLock { $0.sessions.values.map(\.session.clientID).sorted() }
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
    /// ``TransportError`` with code `.connectionLost`.
    ///
    /// - Returns: Whether a connection with that client id was open.
    @discardableResult
    public func dropConnection(clientID: String) -> Bool {
        let session = self.state.withLock { state -> Session? in
            guard let session = state.sessions.values.first(where: { $0.session.clientID == clientID }) else {
                return nil
            }
            return state.sessions.removeValue(forKey: session.session.id)?.session
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
            if let old = state.sessions.values.first(where: { $0.session.clientID == clientID }) {
                takenOver = state.sessions.removeValue(forKey: old.session.id)?.session
            }
            state.nextID += 1
            let session = Session(id: state.nextID, clientID: clientID, will: will, onMessage: onMessage)
            state.sessions[session.id] = Subscriber(session: session)
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
        let removed = self.state.withLock { $0.sessions.removeValue(forKey: session.id)?.session }
        guard let removed else { return false }
        removed.closed.fire()
        if !graceful, let will = removed.will { self.publish(will) }
        return true
    }

    func subscribe(_ session: Session, to filters: [TopicFilter]) throws(TransportError) {
        let retained = try self.state.withLock { state throws(TransportError) -> [TransportMessage] in
            guard state.sessions[session.id] != nil else {
                throw TransportError(.connectionClosed, "the in-process connection is closed")
            }
            // Mutated in place, so the filter list is not copied on every subscription.
            for filter in filters where state.sessions[session.id]?.filters.contains(filter) == false {
                state.sessions[session.id]?.filters.append(filter)
            }
            guard !state.retained.isEmpty else { return [] }
            return state.retained.values.filter { message in filters.contains { $0.matches(message.topic) } }
                .sorted { $0.topic < $1.topic }
        }
        for message in retained { session.onMessage(message) }
    }

    func unsubscribe(_ session: Session, from filters: [TopicFilter]) throws(TransportError) {
        try self.state.withLock { state throws(TransportError) in
            guard state.sessions[session.id] != nil else {
                throw TransportError(.connectionClosed, "the in-process connection is closed")
            }
            state.sessions[session.id]?.filters.removeAll { filters.contains($0) }
        }
    }

    /// Delivers `message` to every session with a matching subscription, once per session.
    ///
    /// - Parameter sender: The publishing session; when given and no longer connected, nothing is
    ///   published.
    /// - Returns: `false` if `sender` is no longer connected.
    @discardableResult
    func publish(_ message: TransportMessage, from sender: Session? = nil) -> Bool {
        let delivery = self.state.withLock {
            state -> (receivers: [Session], taps: [AsyncStream<TransportMessage>.Continuation])? in
            if let sender, state.sessions[sender.id] == nil { return nil }
            if message.retain {
                if message.payload.isEmpty {
                    state.retained[message.topic] = nil
                } else {
                    var stored = message
                    stored.retain = true
                    state.retained[message.topic] = stored
                }
            }
            var receivers: [Session] = []
            for subscriber in state.sessions.values
            where subscriber.filters.contains(where: { $0.matches(message.topic) }) {
                receivers.append(subscriber.session)
            }
            if receivers.count > 1 { receivers.sort { $0.id < $1.id } }
            return (receivers, state.taps.isEmpty ? [] : Array(state.taps.values))
        }
        guard let delivery else { return false }
        var delivered = message
        delivered.retain = false
        for tap in delivery.taps { tap.yield(message) }
        for receiver in delivery.receivers { receiver.onMessage(delivered) }
        return true
    }
}
