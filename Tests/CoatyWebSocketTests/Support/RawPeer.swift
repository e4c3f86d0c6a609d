import CoatySockets
import CoatyWebSocket
import Synchronization
import Testing

/// A hand-driven WebSocket peer over a plain TCP connection, for sending exactly the bytes a test
/// wants (malformed ones included) and checking what comes back.
final class RawPeer: Sendable {
    let tcp: TCPConnection
    private let leftover = Mutex<[UInt8]>([])

    init(_ tcp: TCPConnection) { self.tcp = tcp }

    /// Connects to `port` and, if `handshake`, completes a client's opening handshake.
    static func connect(port: Int, handshake: Bool = true) async throws -> RawPeer {
        let peer = RawPeer(try await TCPConnection.connect(host: "127.0.0.1", port: port))
        if handshake {
            let key = "dGhlIHNhbXBsZSBub25jZQ=="
            try await peer.tcp.write(
                WebSocketHandshake.request(host: "127.0.0.1", port: port, path: "/", key: key).encoded
            )
            let head = try #require(try await peer.readHead().split(separator: "\r\n").first)
            precondition(head == "HTTP/1.1 101 Switching Protocols", "got \(head)")
        }
        return peer
    }

    /// Reads until the HTTP head's blank line; returns it as text. Bytes that came after it in the
    /// same read (frames the server sent at once) are kept for ``readToEnd()``.
    func readHead() async throws -> String {
        var bytes: [UInt8] = []
        while HTTPHead.end(in: bytes) == nil {
            let chunk = try await self.tcp.read()
            if chunk.isEmpty { break }
            bytes += chunk
        }
        let end = HTTPHead.end(in: bytes) ?? bytes.count
        self.leftover.withLock { $0 = Array(bytes[end...]) }
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// Reads until EOF, starting with what ``readHead()`` kept.
    func readToEnd() async throws -> [UInt8] {
        var bytes: [UInt8] = self.leftover.withLock { $0 }
        while true {
            let chunk = try await self.tcp.read()
            if chunk.isEmpty { return bytes }
            bytes += chunk
        }
    }

    /// Reads frames (as a client) until EOF.
    func framesUntilEOF() async throws -> [WebSocketFrame] {
        var decoder = WebSocketFrameDecoder(role: .client, maximumFrameSize: 1 << 24, maximumMessageSize: 1 << 24)
        decoder.append(try await self.readToEnd())
        var frames: [WebSocketFrame] = []
        while let frame = try decoder.next() { frames.append(frame) }
        return frames
    }

    /// Sends `frame` masked, as a client must.
    func send(_ frame: WebSocketFrame) async throws {
        try await self.tcp.write(frame.encoded(maskingKey: 0x1234_5678))
    }

    func send(raw bytes: [UInt8]) async throws {
        try await self.tcp.write(bytes)
    }
}
