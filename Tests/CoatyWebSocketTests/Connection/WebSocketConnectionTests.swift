import CoatySockets
import CoatyWebSocket
import Synchronization
import Testing

/// `WebSocketConnection` over loopback TCP: our client with our server, and a hand-driven peer that
/// sends what a test wants.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketConnectionTests {
    /// Accepts one connection on a fresh listener and runs the server's opening handshake on it, while
    /// `client` runs with the port; returns what `server` returns.
    private func withServer<Value: Sendable>(
        configuration: WebSocketConnection.Configuration = .init(),
        server: @escaping @Sendable (Result<WebSocketConnection, any Error>) async throws -> Value,
        client: @escaping @Sendable (Int) async throws -> Void
    ) async throws -> Value {
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0)
        defer { listener.close() }
        return try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask {
                let tcp = try await listener.accept()
                let accepted: Result<WebSocketConnection, any Error>
                do {
                    accepted = .success(try await WebSocketConnection.accept(tcp, configuration: configuration))
                } catch {
                    accepted = .failure(error)
                }
                return try await server(accepted)
            }
            group.addTask {
                try await client(listener.port)
                return nil
            }
            var result: Value?
            for try await value in group where value != nil { result = value }
            return try #require(result)
        }
    }

    @Test func clientAndServerExchangeBytes() async throws {
        let upload = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let received = try await self.withServer(
            server: { accepted in
                let server = try accepted.get()
                #expect(server.subprotocol == "mqtt")
                var bytes: [UInt8] = []
                while bytes.count < upload.count {
                    let chunk = try await server.read()
                    #expect(!chunk.isEmpty)
                    bytes += chunk
                }
                try await server.write(contentsOf: [[1, 2], [3]])
                #expect(try await server.read().isEmpty)  // the client's close frame
                server.close()
                return bytes
            },
            client: { port in
                let client = try await WebSocketConnection.connect(host: "127.0.0.1", port: port, path: "/mqtt")
                #expect(client.subprotocol == "mqtt")
                try await client.write(upload)
                #expect(try await client.read(maxBytes: 2) == [1, 2])
                #expect(try await client.read() == [3])
                client.shutdownOutput()
                #expect(try await client.read().isEmpty)
                client.close()
            }
        )
        #expect(received == upload)
    }

    /// After its own close frame, a side leaves a ping unanswered and still reads to the peer's close
    /// frame: the closing handshake ends normally, not with an error.
    @Test func aPingAfterOurCloseDoesNotBreakTheClosingHandshake() async throws {
        let frames = Mutex<[WebSocketFrame]>([])
        let ending = try await self.withServer(
            server: { accepted in
                let server = try accepted.get()
                server.shutdownOutput()  // close frame 1000, then FIN
                let result: String
                do {
                    result = try await server.read().isEmpty ? "end" : "data"
                } catch {
                    result = "error: \(error)"
                }
                server.close()
                return result
            },
            client: { port in
                let peer = try await RawPeer.connect(port: port)
                try await peer.send(WebSocketFrame(opcode: .ping, payload: Array("late".utf8)))
                try await peer.send(.close(code: 1000))
                let answer = try await peer.framesUntilEOF()
                frames.withLock { $0 = answer }
            }
        )
        #expect(ending == "end")
        #expect(frames.withLock { $0 } == [.close(code: 1000)])
    }

    @Test func pingBetweenFragmentsIsAnsweredAndCloseIsEchoed() async throws {
        let frames = Mutex<[WebSocketFrame]>([])
        let received = try await self.withServer(
            server: { accepted in
                let server = try accepted.get()
                var bytes: [UInt8] = []
                while true {
                    let chunk = try await server.read()
                    if chunk.isEmpty { break }
                    bytes += chunk
                }
                server.close()
                return bytes
            },
            client: { port in
                let peer = try await RawPeer.connect(port: port)
                try await peer.send(WebSocketFrame(fin: false, opcode: .binary, payload: [1, 2]))
                try await peer.send(WebSocketFrame(opcode: .ping, payload: Array("p".utf8)))
                try await peer.send(WebSocketFrame(opcode: .continuation, payload: [3]))
                try await peer.send(.close(code: 1000))
                let answer = try await peer.framesUntilEOF()
                frames.withLock { $0 = answer }
            }
        )
        #expect(received == [1, 2, 3])
        #expect(
            frames.withLock { $0 } == [WebSocketFrame(opcode: .pong, payload: Array("p".utf8)), .close(code: 1000)]
        )
    }

    @Test(
        arguments: [
            // An unmasked client frame, a control frame of 126 bytes, a fragmented ping, a 64-bit length
            // with its top bit set, a text frame, a frame above the 1 KiB limit.
            ([0x82, 0x01, 0x00], UInt16(1002)),
            (WebSocketFrame(opcode: .ping).encoded(maskingKey: 1).prefix(1) + [0xFE, 0x00, 0x7E, 0, 0, 0, 1], 1002),
            ([0x09, 0x80, 0, 0, 0, 0], 1002),
            ([0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0], 1002),
            (WebSocketFrame(opcode: .text, payload: [0x41]).encoded(maskingKey: 9), 1003),
            ([0x82, 0xFE, 0x08, 0x00, 0, 0, 0, 0], 1009),
        ] as [([UInt8], UInt16)]
    )
    func serverClosesOnABadFrameWithItsCode(bytes: [UInt8], closeCode: UInt16) async throws {
        let frames = Mutex<[WebSocketFrame]>([])
        let error = try await self.withServer(
            configuration: .init(maximumFrameSize: 1024),
            server: { accepted in
                let server = try accepted.get()
                do {
                    _ = try await server.read()
                    return WebSocketError(.closed, "read returned")
                } catch let error as WebSocketError {
                    #expect(server.isClosed)
                    return error
                }
            },
            client: { port in
                let peer = try await RawPeer.connect(port: port)
                try await peer.send(raw: bytes)
                let answer = try await peer.framesUntilEOF()
                frames.withLock { $0 = answer }
            }
        )
        #expect(error.closeCode == closeCode)
        #expect(frames.withLock { $0.map(WebSocketFrameDecoder.closeCode(of:)) } == [closeCode])
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nX: <9000 bytes>\r\n\r\n", "HTTP/1.1 431"),
        (
            "GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: short\r\n"
                + "Sec-WebSocket-Version: 13\r\n\r\n", "HTTP/1.1 400"
        ),
        (
            "GET / HTTP/1.1\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                + "Sec-WebSocket-Version: 13\r\n\r\n", "HTTP/1.1 400"
        ),
        ("\u{1}\u{2}garbage\r\n\r\n", "HTTP/1.1 400"),
        ("GET / HTTP/1.1\r\nHost: x\r\n", ""),  // then EOF: nothing to answer
    ])
    func serverRefusesBadHandshakes(request: String, status: String) async throws {
        let response = Mutex("")
        let error = try await self.withServer(
            server: { accepted in
                guard case .failure(let error) = accepted else { return WebSocketError(.closed, "accepted") }
                return try #require(error as? WebSocketError)
            },
            client: { port in
                let peer = try await RawPeer.connect(port: port, handshake: false)
                let oversized = request.replacing("<9000 bytes>", with: String(repeating: "a", count: 9000))
                try await peer.send(raw: Array(oversized.utf8))
                if status.isEmpty { peer.tcp.shutdownOutput() }
                let bytes = try await peer.readToEnd()
                response.withLock { $0 = String(decoding: bytes, as: UTF8.self) }
            }
        )
        #expect(error.code == .handshakeFailed)
        let text = response.withLock { $0 }
        #expect(status.isEmpty ? text.isEmpty : text.hasPrefix(status), "\(text)")
    }

    /// A server that answers the handshake wrongly, or sends a masked frame, is refused by the client.
    @Test func clientRefusesBadServers() async throws {
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0)
        defer { listener.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                let refusing = try await listener.accept()
                _ = try await refusing.read()
                try await refusing.write(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8))
                let masking = try await listener.accept()
                var head: [UInt8] = []
                while HTTPHead.end(in: head) == nil { head += try await masking.read() }
                let request = try #require(HTTPHead(parsing: head[...]))
                guard case .accept(let response, _) = WebSocketHandshake.answer(to: request) else { return }
                try await masking.write(
                    response.encoded + WebSocketFrame(opcode: .binary, payload: [1]).encoded(maskingKey: 5)
                )
                _ = try await masking.read()
            }
            let refused = await #expect(throws: WebSocketError.self) {
                _ = try await WebSocketConnection.connect(host: "127.0.0.1", port: listener.port)
            }
            #expect(refused?.code == .handshakeFailed)
            let client = try await WebSocketConnection.connect(host: "127.0.0.1", port: listener.port)
            let violation = await #expect(throws: WebSocketError.self) { _ = try await client.read() }
            #expect(violation?.closeCode == 1002)
            try await group.waitForAll()
        }
    }
}
