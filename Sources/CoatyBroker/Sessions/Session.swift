import CoatyCore

/// The identity of one network connection, distinct from the session it is attached to.
struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    var rawValue: UInt64

    var description: String { "c\(self.rawValue)" }
}

/// The server-side state of one MQTT session (MQTT 3.1.1 §4.1).
///
/// Holds the subscriptions, the QoS 1/2 messages sent and not yet completed (in send order, for
/// redelivery on reconnect [MQTT-4.4.0-1]), the QoS 1/2 messages waiting for a free in-flight slot or
/// for the client to come back, and the QoS 2 packet ids received and not yet released.
struct Session: Sendable {
    /// Where an outbound QoS 1/2 message stands in its handshake.
    enum OutboundState: Sendable, Equatable {
        /// QoS 1 PUBLISH sent; waiting for PUBACK.
        case awaitingPubAck
        /// QoS 2 PUBLISH sent; waiting for PUBREC.
        case awaitingPubRec
        /// QoS 2 PUBREL sent; waiting for PUBCOMP. The PUBLISH is never resent [MQTT-4.3.3-1].
        case awaitingPubComp
    }

    /// One outbound QoS 1/2 message in flight.
    struct InFlight: Sendable, Equatable {
        var packetID: UInt16
        var message: BrokerMessage
        var state: OutboundState
    }

    let id: SessionID
    let clientID: String
    /// The access control rules of the client last connected, or `nil` when no ACL is configured.
    var access: ClientAccess?
    /// Whether the session outlives its connection (CleanSession=0).
    var isPersistent: Bool
    /// The connection currently attached, if the client is online.
    var connection: ConnectionID?
    /// Topic filter bytes → granted QoS.
    var subscriptions = SmallDictionary<ByteKey, QualityOfService>()
    /// Outbound QoS 1/2 messages in flight, oldest first.
    var inFlight: [InFlight] = []
    /// Outbound QoS 1/2 messages waiting for a window slot or for the client to reconnect.
    var pending: MessageQueue
    /// Inbound QoS 2 packet ids received and not yet released by PUBREL.
    var inboundQoS2: Set<UInt16> = []
    /// The next candidate for an outbound packet identifier.
    var nextPacketID: UInt16 = 1
    /// Messages dropped for this session because its queue was full.
    var droppedMessages = 0
    /// Acknowledgements received (PUBACK, PUBREC, PUBCOMP for messages in flight): the client's progress.
    var acknowledgements: UInt64 = 0

    init(id: SessionID, clientID: String, isPersistent: Bool, queueCapacity: Int, queueByteCapacity: Int) {
        self.id = id
        self.clientID = clientID
        self.isPersistent = isPersistent
        self.pending = MessageQueue(capacity: queueCapacity, byteCapacity: queueByteCapacity)
    }

    /// Allocates an outbound packet identifier not used by any message in flight [MQTT-2.3.1-2/4].
    ///
    /// Never returns 0 and never reuses an id still in flight. Returns `nil` only if all 65,535 ids are
    /// in use, which the in-flight limit prevents.
    mutating func allocatePacketID() -> UInt16? {
        guard self.inFlight.count < Int(UInt16.max) else { return nil }
        let inUse = self.inFlight.count > 8 ? Set(self.inFlight.map(\.packetID)) : nil
        while true {
            let candidate = self.nextPacketID
            self.nextPacketID = candidate == UInt16.max ? 1 : candidate + 1
            let used = inUse?.contains(candidate) ?? self.inFlight.contains { $0.packetID == candidate }
            if !used { return candidate }
        }
    }

    /// The index of the in-flight message with `packetID`.
    func inFlightIndex(of packetID: UInt16) -> Int? {
        self.inFlight.firstIndex { $0.packetID == packetID }
    }
}
