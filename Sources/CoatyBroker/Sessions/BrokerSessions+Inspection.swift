extension BrokerSessions {
    /// The session of `clientID`, for statistics and tests.
    func session(clientID: String) -> Session? { self.sessions[ByteKey(clientID)] }

    /// Whether a session, online or offline, exists for `clientID`.
    func hasSession(clientID: String) -> Bool { self.sessions.index(forKey: ByteKey(clientID)) != nil }

    /// Whether a subscription of `session` matches `topic` (a topic name's UTF-8 bytes).
    func isSubscribed(_ session: SessionID, to topic: [UInt8]) -> Bool {
        self.subscriptions.match(topic: topic)[session] != nil
    }
}
