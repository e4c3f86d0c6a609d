import CoatyCore

/// One change to the state that outlives a restart, as the persistence log stores it: persistent
/// sessions, their subscriptions and QoS 1/2 flows, and the retained messages.
///
/// Sessions are named by their client id's UTF-8 bytes. Replaying the records of a log in order
/// (``PersistentState/apply(_:)``) rebuilds the state they were taken from.
enum PersistenceRecord: Sendable, Equatable {
    /// A persistent session was created (CleanSession=0 and no session held for the client).
    case sessionCreated(clientID: [UInt8])
    /// A persistent session ended: a clean CONNECT replaced it, or it was discarded offline.
    case sessionEnded(clientID: [UInt8])
    /// The session subscribed to a filter, or changed its granted QoS.
    case subscribed(clientID: [UInt8], filter: [UInt8], qos: QualityOfService)
    /// The session unsubscribed from a filter.
    case unsubscribed(clientID: [UInt8], filter: [UInt8])
    /// A QoS 1/2 message for the session was appended to its queue (dropping the oldest if it is full).
    case queued(clientID: [UInt8], message: BrokerMessage)
    /// The oldest queued message of the session went in flight with this packet id.
    case sent(clientID: [UInt8], packetID: UInt16)
    /// The client sent PUBREC for the QoS 2 message in flight with this id; PUBREL is due next.
    case pubrecReceived(clientID: [UInt8], packetID: UInt16)
    /// The message in flight with this id is complete (PUBACK, or PUBCOMP).
    case completed(clientID: [UInt8], packetID: UInt16)
    /// The client published a QoS 2 message with this id, not yet released by PUBREL.
    case inboundReceived(clientID: [UInt8], packetID: UInt16)
    /// The client released the inbound QoS 2 packet id (PUBREL).
    case inboundReleased(clientID: [UInt8], packetID: UInt16)
    /// A retained message was stored for its topic, replacing any earlier one.
    case retainedSet(message: BrokerMessage)
    /// The retained message of a topic was deleted.
    case retainedCleared(topic: [UInt8])

    /// The bytes this record holds beyond its fixed fields, for bounding buffers of records.
    var variableSize: Int {
        switch self {
        case .sessionCreated(let client), .sessionEnded(let client): client.count
        case .subscribed(let client, let filter, _), .unsubscribed(let client, let filter): client.count + filter.count
        case .queued(let client, let message): client.count + message.queuedSize
        case .sent(let client, _), .pubrecReceived(let client, _), .completed(let client, _),
            .inboundReceived(let client, _), .inboundReleased(let client, _):
            client.count
        case .retainedSet(let message): message.queuedSize
        case .retainedCleared(let topic): topic.count
        }
    }
}

// MARK: - Body encoding

extension PersistenceRecord {
    /// The first byte of each record's body.
    private enum Kind: UInt8 {
        case sessionCreated = 1, sessionEnded, subscribed, unsubscribed, queued, sent, pubrecReceived, completed
        case inboundReceived, inboundReleased, retainedSet, retainedCleared
    }

    /// Appends the record's body: a kind byte, then its fields. Byte strings are prefixed with their
    /// length (2 bytes big-endian; a payload 4 bytes), packet ids take 2 bytes, a QoS 1 byte.
    func encodeBody(into buffer: inout [UInt8]) {
        switch self {
        case .sessionCreated(let client): Self.put(.sessionCreated, client, into: &buffer)
        case .sessionEnded(let client): Self.put(.sessionEnded, client, into: &buffer)
        case .subscribed(let client, let filter, let qos):
            Self.put(.subscribed, client, into: &buffer)
            Self.putShort(filter, into: &buffer)
            buffer.append(qos.rawValue)
        case .unsubscribed(let client, let filter):
            Self.put(.unsubscribed, client, into: &buffer)
            Self.putShort(filter, into: &buffer)
        case .queued(let client, let message):
            Self.put(.queued, client, into: &buffer)
            Self.putMessage(message, into: &buffer)
        case .sent(let client, let id): Self.put(.sent, client, packetID: id, into: &buffer)
        case .pubrecReceived(let client, let id): Self.put(.pubrecReceived, client, packetID: id, into: &buffer)
        case .completed(let client, let id): Self.put(.completed, client, packetID: id, into: &buffer)
        case .inboundReceived(let client, let id): Self.put(.inboundReceived, client, packetID: id, into: &buffer)
        case .inboundReleased(let client, let id): Self.put(.inboundReleased, client, packetID: id, into: &buffer)
        case .retainedSet(let message):
            buffer.append(Kind.retainedSet.rawValue)
            Self.putMessage(message, into: &buffer)
        case .retainedCleared(let topic):
            Self.put(.retainedCleared, topic, into: &buffer)
        }
    }

    /// Decodes a body written by ``encodeBody(into:)``; `nil` if it is malformed (an unknown kind,
    /// a field running past the end, bytes left over or an invalid QoS).
    init?(body: ArraySlice<UInt8>) {
        var reader = BodyReader(bytes: body)
        guard let kindByte = reader.byte(), let kind = Kind(rawValue: kindByte) else { return nil }
        let decoded: PersistenceRecord?
        switch kind {
        case .retainedSet:
            decoded = reader.message().map { .retainedSet(message: $0) }
        case .retainedCleared:
            decoded = reader.short().map { .retainedCleared(topic: $0) }
        default:
            guard let client = reader.short() else { return nil }
            switch kind {
            case .sessionCreated: decoded = .sessionCreated(clientID: client)
            case .sessionEnded: decoded = .sessionEnded(clientID: client)
            case .subscribed:
                guard let filter = reader.short(), let qos = reader.byte().flatMap(QualityOfService.init(rawValue:))
                else { return nil }
                decoded = .subscribed(clientID: client, filter: filter, qos: qos)
            case .unsubscribed: decoded = reader.short().map { .unsubscribed(clientID: client, filter: $0) }
            case .queued: decoded = reader.message().map { .queued(clientID: client, message: $0) }
            case .sent: decoded = reader.uint16().map { .sent(clientID: client, packetID: $0) }
            case .pubrecReceived: decoded = reader.uint16().map { .pubrecReceived(clientID: client, packetID: $0) }
            case .completed: decoded = reader.uint16().map { .completed(clientID: client, packetID: $0) }
            case .inboundReceived: decoded = reader.uint16().map { .inboundReceived(clientID: client, packetID: $0) }
            case .inboundReleased: decoded = reader.uint16().map { .inboundReleased(clientID: client, packetID: $0) }
            case .retainedSet, .retainedCleared: return nil
            }
        }
        guard let decoded, reader.isAtEnd else { return nil }
        self = decoded
    }

    private static func put(_ kind: Kind, _ bytes: [UInt8], packetID: UInt16? = nil, into buffer: inout [UInt8]) {
        buffer.append(kind.rawValue)
        Self.putShort(bytes, into: &buffer)
        if let packetID { Self.putUInt16(packetID, into: &buffer) }
    }

    private static func putUInt16(_ value: UInt16, into buffer: inout [UInt8]) {
        buffer.append(UInt8(truncatingIfNeeded: value >> 8))
        buffer.append(UInt8(truncatingIfNeeded: value))
    }

    /// A byte string of at most 65,535 bytes: client ids, topics and filters are MQTT strings.
    private static func putShort(_ bytes: [UInt8], into buffer: inout [UInt8]) {
        Self.putUInt16(UInt16(truncatingIfNeeded: bytes.count), into: &buffer)
        buffer.append(contentsOf: bytes)
    }

    private static func putMessage(_ message: BrokerMessage, into buffer: inout [UInt8]) {
        buffer.append(message.qos.rawValue | (message.retain ? 0x80 : 0))
        Self.putShort(message.topic, into: &buffer)
        let count = UInt32(truncatingIfNeeded: message.payload.count)
        for shift in stride(from: 24, through: 0, by: -8) { buffer.append(UInt8(truncatingIfNeeded: count >> shift)) }
        buffer.append(contentsOf: message.payload)
    }
}

/// Reads the fields of a record body, failing (`nil`) instead of running past its end.
private struct BodyReader {
    var bytes: ArraySlice<UInt8>

    var isAtEnd: Bool { self.bytes.isEmpty }

    mutating func byte() -> UInt8? { self.bytes.popFirst() }

    mutating func uint16() -> UInt16? {
        guard let high = self.byte(), let low = self.byte() else { return nil }
        return UInt16(high) << 8 | UInt16(low)
    }

    mutating func take(_ count: Int) -> [UInt8]? {
        guard self.bytes.count >= count else { return nil }
        defer { self.bytes = self.bytes.dropFirst(count) }
        return Array(self.bytes.prefix(count))
    }

    mutating func short() -> [UInt8]? { self.uint16().flatMap { self.take(Int($0)) } }

    mutating func message() -> BrokerMessage? {
        guard let flags = self.byte(), let qos = QualityOfService(rawValue: flags & 0x7F),
            let topic = self.short(), let high = self.uint16(), let low = self.uint16(),
            let payload = self.take(Int(UInt32(high) << 16 | UInt32(low)))
        else { return nil }
        return BrokerMessage(topic: topic, payload: payload, qos: qos, retain: flags & 0x80 != 0)
    }
}
