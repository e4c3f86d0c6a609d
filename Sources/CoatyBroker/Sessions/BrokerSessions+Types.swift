import CoatyCore

extension BrokerSessions {
    /// Something the connection layer must do as a result of a state change.
    enum Output: Sendable, Equatable {
        /// Send a PUBLISH. `packetID` is set for QoS 1/2; `dup` only for a redelivery.
        case publish(ConnectionID, BrokerMessage, packetID: UInt16?, dup: Bool)
        /// Send a PUBREL (a resumed QoS 2 handshake, or an answer to PUBREC).
        case pubrel(ConnectionID, UInt16)
        /// Close a connection (session takeover); its will has already been handled.
        case close(ConnectionID)
    }

    /// What an acknowledgement from a client did.
    enum AckResult: Sendable, Equatable {
        /// Handled (or an unsolicited ack that is ignored).
        case ok
        /// An ack of the wrong type for a message in flight: a protocol violation, close the connection.
        case protocolViolation
    }
}
