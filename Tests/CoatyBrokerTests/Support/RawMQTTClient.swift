import CoatyMQTTPackets
import CoatySockets

/// Errors of the raw test client.
enum RawClientError: Error, CustomStringConvertible {
    case timedOut(String)
    case closed(String)
    case mismatch(expected: [UInt8], received: [UInt8])

    var description: String {
        switch self {
        case .timedOut(let what): "timed out: \(what)"
        case .closed(let what): "connection closed: \(what)"
        case .mismatch(let expected, let received): "expected \(hex(expected)), received \(hex(received))"
        }
    }
}

/// Runs `operation`, returning `nil` if it does not finish within `timeout` (the operation is cancelled).
func withTimeout<T: Sendable>(
    _ timeout: Duration,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { return nil }
        return first
    }
}

/// A byte-level MQTT test client: sends raw bytes and reads exact byte counts with timeouts.
struct RawMQTTClient: Sendable {
    let connection: TCPConnection
    private var buffer: [UInt8] = []
    private var decoder = MQTTPacketDecoder()

    init(connection: TCPConnection) {
        self.connection = connection
    }

    static func connect(port: Int, timeout: Duration = .seconds(2)) async throws -> RawMQTTClient {
        guard
            let connection = try await withTimeout(
                timeout,
                { try await TCPConnection.connect(host: "127.0.0.1", port: port) }
            )
        else { throw RawClientError.timedOut("connect") }
        return RawMQTTClient(connection: connection)
    }

    func send(_ bytes: [UInt8], timeout: Duration = .seconds(2)) async throws {
        let connection = self.connection
        guard try await withTimeout(timeout, { try await connection.write(bytes) }) != nil else {
            throw RawClientError.timedOut("write")
        }
    }

    func send(_ packet: MQTTPacket) async throws {
        try await self.send(packet.encoded())
    }

    /// Reads once: the bytes, `[]` at EOF, or `nil` on timeout. Buffered bytes are returned first.
    mutating func readSome(timeout: Duration = .seconds(2)) async throws -> [UInt8]? {
        if !self.buffer.isEmpty {
            defer { self.buffer = [] }
            return self.buffer
        }
        let connection = self.connection
        return try await withTimeout(timeout) { try await connection.read() }
    }

    /// Reads exactly `count` bytes, or throws on EOF/timeout.
    mutating func receive(count: Int, timeout: Duration = .seconds(2)) async throws -> [UInt8] {
        let connection = self.connection
        while self.buffer.count < count {
            guard let bytes = try await withTimeout(timeout, { try await connection.read() }) else {
                throw RawClientError.timedOut("read \(count) bytes, have \(hex(self.buffer))")
            }
            if bytes.isEmpty { throw RawClientError.closed("after \(hex(self.buffer))") }
            self.buffer += bytes
        }
        let result = Array(self.buffer.prefix(count))
        self.buffer.removeFirst(count)
        return result
    }

    /// Reads exactly the expected bytes or throws ``RawClientError/mismatch(expected:received:)``.
    mutating func expect(_ expected: [UInt8], timeout: Duration = .seconds(2)) async throws {
        let received = try await self.receive(count: expected.count, timeout: timeout)
        if received != expected { throw RawClientError.mismatch(expected: expected, received: received) }
    }

    /// Reads one whole MQTT packet (use either this or the byte-level reads on one connection).
    mutating func receivePacket(timeout: Duration = .seconds(2)) async throws -> MQTTPacket {
        let connection = self.connection
        while true {
            if !self.buffer.isEmpty {
                self.decoder.append(self.buffer)
                self.buffer = []
            }
            if let packet = try self.decoder.next() { return packet }
            guard let bytes = try await withTimeout(timeout, { try await connection.read() }) else {
                throw RawClientError.timedOut("packet")
            }
            if bytes.isEmpty { throw RawClientError.closed("while reading a packet") }
            self.buffer = bytes
        }
    }

    /// Reads packets until one satisfies `predicate`, returning it and the count of skipped packets.
    mutating func receivePacket(
        timeout: Duration = .seconds(2),
        where predicate: (MQTTPacket) -> Bool
    ) async throws -> MQTTPacket {
        while true {
            let packet = try await self.receivePacket(timeout: timeout)
            if predicate(packet) { return packet }
        }
    }

    /// Whether the broker closes the connection within `timeout` without sending anything more.
    mutating func isClosedByPeer(timeout: Duration = .seconds(2)) async -> Bool {
        guard self.buffer.isEmpty else { return false }
        let connection = self.connection
        do {
            guard let bytes = try await withTimeout(timeout, { try await connection.read(maxBytes: 1) }) else {
                return false
            }
            return bytes.isEmpty
        } catch {
            return true  // reset
        }
    }

    /// Subscribes to one filter and returns the broker's answer (the SUBACK).
    @discardableResult
    mutating func subscribe(_ filter: String, qos: MQTTQoS, packetID: UInt16 = 1) async throws -> MQTTPacket {
        let subscription = MQTTSubscription(filter: filter, qos: qos)
        try await self.send(.subscribe(MQTTSubscribePacket(packetID: packetID, subscriptions: [subscription])))
        return try await self.receivePacket()
    }

    func close() { self.connection.close() }

    /// Sends CONNECT and expects CONNACK accepted.
    static func connected(
        port: Int,
        clientID: String,
        cleanSession: Bool = true,
        keepAlive: UInt16 = 60,
        will: MQTTWill? = nil,
        username: String? = nil,
        password: [UInt8]? = nil,
        sessionPresent: Bool = false
    ) async throws -> RawMQTTClient {
        var client = try await Self.connect(port: port)
        try await client.send(
            .connect(
                MQTTConnectPacket(
                    clientID: clientID,
                    cleanSession: cleanSession,
                    keepAliveSeconds: keepAlive,
                    will: will,
                    username: username,
                    password: password
                )
            )
        )
        try await client.expect([0x20, 0x02, sessionPresent ? 1 : 0, 0x00])
        return client
    }
}

/// Hex dump, for messages.
func hex(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: " ")
}

/// Parses hex with any spacing.
func bytes(hex text: String) -> [UInt8]? {
    let digits = Array(text.filter { !$0.isWhitespace })
    guard digits.count % 2 == 0 else { return nil }
    var result: [UInt8] = []
    result.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
        guard let byte = UInt8(String(digits[index...index + 1]), radix: 16) else { return nil }
        result.append(byte)
        index += 2
    }
    return result
}
