import CoatyCore

extension BrokerSessions {
    /// The sessions a topic reaches, each with the highest QoS granted among its matching subscriptions.
    typealias Subscribers = SmallDictionary<SessionID, QualityOfService>

    /// The session of `clientID`, for statistics and tests.
    func session(clientID: String) -> Session? { self.sessions[ByteKey(clientID)] }

    /// Whether a session, online or offline, exists for `clientID`.
    func hasSession(clientID: String) -> Bool { self.sessions.index(forKey: ByteKey(clientID)) != nil }

    /// The sessions whose subscriptions match `topic` (a topic name's UTF-8 bytes).
    func subscribers(of topic: [UInt8]) -> Subscribers {
        self.subscriptions.match(topic: topic)
    }
}
