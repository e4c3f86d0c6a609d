import CoatyMQTTPackets
import CoatySockets
import CoatyTransport

/// A scripted broker on a loopback port: the test reads and writes packets (or raw bytes) itself.
struct FakeBroker {
    let listener: TCPListener
    var url: String { "mqtt://127.0.0.1:\(self.listener.port)" }

    init() throws {
        self.listener = try TCPListener.bind(port: 0)
    }

    /// Accepts one client connection.
    func accept() async throws -> FakeSession {
        FakeSession(connection: try await self.listener.accept())
    }
}

/// The broker side of one client connection.
final class FakeSession {
    let connection: TCPConnection
    private var decoder = MQTTPacketDecoder()

    init(connection: TCPConnection) {
        self.connection = connection
    }

    /// The next packet from the client, or `nil` at end of stream.
    func read() async throws -> MQTTPacket? {
        while true {
            if let packet = try self.decoder.next() { return packet }
            let bytes = try await self.connection.read()
            if bytes.isEmpty { return nil }
            self.decoder.append(bytes)
        }
    }

    func send(_ packet: MQTTPacket) async throws {
        try await self.connection.write(try packet.encoded())
    }

    func sendRaw(_ bytes: [UInt8]) async throws {
        try await self.connection.write(bytes)
    }

    /// Reads the CONNECT and accepts it.
    @discardableResult
    func acceptConnect() async throws -> MQTTConnectPacket? {
        guard case .connect(let connect) = try await self.read() else { return nil }
        try await self.send(.connack(.init(sessionPresent: false, returnCode: .accepted)))
        return connect
    }

    func close() {
        self.connection.close()
    }
}
