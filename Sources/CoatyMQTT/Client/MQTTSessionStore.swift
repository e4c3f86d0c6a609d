import Synchronization

/// Keeps the client's half of persistent sessions between connections, in memory, by broker and
/// client identifier.
///
/// An ``MQTTTransport`` and its copies share one store. A connection takes its session's state when
/// the broker accepts it and puts back what is left when it ends, so two connections with the same
/// client identifier at once (which the broker would not allow for long anyway) do not share state:
/// the later one starts empty. Only non-empty states are kept, and each is bounded by the in-flight
/// window and the 65,535 packet identifiers.
final class MQTTSessionStore: Sendable {
    private let sessions = Mutex<[String: MQTTSessionState]>([:])

    /// The key of a client's session at a broker.
    static func key(broker: MQTTBrokerAddress, clientID: String) -> String {
        "\(broker.host):\(broker.port) \(clientID)"
    }

    /// Removes and returns the state kept for `key` (empty if there is none).
    func take(_ key: String) -> MQTTSessionState {
        self.sessions.withLock { $0.removeValue(forKey: key) } ?? MQTTSessionState()
    }

    /// Keeps `state` for `key`'s next connection, or forgets the key when `state` is empty.
    func keep(_ state: MQTTSessionState, for key: String) {
        self.sessions.withLock { $0[key] = state.isEmpty ? nil : state }
    }
}
