import CoatyCore
public import CoatyTransport

/// A `Transport` between agents of one process, over a shared ``InProcessBus``: no broker, no
/// sockets, MQTT topic-filter semantics.
///
/// A connection closes gracefully (no last will) when `body` returns, and abruptly (the bus publishes
/// the last will) when `body` throws, including when it throws `CancellationError`.
/// ``InProcessBus/dropConnection(clientID:)`` simulates a lost connection.
public struct InProcessTransport: Transport {
    /// The bus this transport connects to.
    public let bus: InProcessBus

    /// Creates a transport on `bus`.
    public init(bus: InProcessBus) {
        self.bus = bus
    }

    /// Opens a connection on the bus, runs `body` with it and closes it.
    ///
    /// - Throws: `TransportError` with code `.connectionLost` if the connection was dropped or taken
    ///   over while `body` ran; what `body` throws.
    public func withConnection<Result: Sendable>(
        _ options: TransportConnectOptions,
        onMessage: @escaping @Sendable (TransportMessage) -> Void,
        _ body: (any TransportConnection) async throws -> Result
    ) async throws -> Result {
        let session = self.bus.connect(clientID: options.clientID, will: options.lastWill, onMessage: onMessage)
        let connection = InProcessConnection(bus: self.bus, session: session)
        let result: Result
        do {
            result = try await body(connection)
        } catch {
            let wasOpen = self.bus.disconnect(session, graceful: false)
            if !wasOpen {
                throw TransportError(.connectionLost, "the in-process connection was dropped", underlying: error)
            }
            throw error
        }
        guard self.bus.disconnect(session, graceful: true) else {
            throw TransportError(.connectionLost, "the in-process connection was dropped")
        }
        return result
    }
}

/// One open connection of an ``InProcessTransport``.
///
/// A class, so that a copy of it (the manager hands its connection around on every request and
/// response) is one retain rather than one per field.
final class InProcessConnection: TransportConnection {
    let bus: InProcessBus
    let session: InProcessBus.Session

    init(bus: InProcessBus, session: InProcessBus.Session) {
        self.bus = bus
        self.session = session
    }

    func publish(_ message: TransportMessage) async throws {
        _ = try self.publishWithoutWaiting(message)
    }

    func publishWithoutWaiting(_ message: TransportMessage) throws -> Bool {
        do {
            try TopicName.validate(message.topic)
        } catch {
            throw TransportError(.invalidArgument, error.description, underlying: error)
        }
        guard self.bus.publish(message, from: self.session) else {
            throw TransportError(.connectionLost, "the in-process connection is closed")
        }
        return true
    }

    func subscribe(to filters: [TopicFilter]) async throws {
        _ = try self.subscribeWithoutWaiting(to: filters)
    }

    func subscribeWithoutWaiting(to filters: [TopicFilter]) throws -> Bool {
        do {
            try self.bus.subscribe(self.session, to: filters)
        } catch {
            throw TransportError(.connectionLost, error.message)
        }
        return true
    }

    func unsubscribe(from filters: [TopicFilter]) async throws {
        _ = try self.unsubscribeWithoutWaiting(from: filters)
    }

    func unsubscribeWithoutWaiting(from filters: [TopicFilter]) throws -> Bool {
        do {
            try self.bus.unsubscribe(self.session, from: filters)
        } catch {
            throw TransportError(.connectionLost, error.message)
        }
        return true
    }

    func waitUntilClosed() async {
        await self.session.closed.wait()
    }
}
