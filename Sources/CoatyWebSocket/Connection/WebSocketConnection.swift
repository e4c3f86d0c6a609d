package import CoatySockets
import Synchronization

/// A WebSocket connection (RFC 6455) carrying a byte stream in binary frames, as MQTT over WebSocket
/// does: ``read(maxBytes:)`` returns the payloads of the data frames received, in order, and
/// ``write(_:)`` sends binary frames.
///
/// MQTT packets may span frames and a frame may hold several packets [MQTT-6.0.0-2], so the frame
/// boundaries mean nothing to the reader. Control frames are handled inside ``read(maxBytes:)``: a ping
/// is answered with a pong, a close frame is echoed and ends the stream (an empty read). A text frame
/// ends the connection with close code 1003, as MQTT allows only binary frames [MQTT-6.0.0-1]; a frame
/// that breaks RFC 6455 or the size limits of ``Configuration`` ends it with 1002 or 1009.
///
/// Like ``TCPConnection``, one task may read while another writes. Frames of concurrent writers (the
/// writer, and the reader answering a ping) never interleave.
package final class WebSocketConnection: ByteStreamConnection {
    /// What the frames travel over: TCP, or TLS for `wss://`.
    private let stream: any CarrierByteStream
    /// Which end this is: a client masks its frames, a server does not.
    package let role: WebSocketRole
    /// The subprotocol agreed in the handshake (`mqtt` or `mqttv3.1`), if any.
    package let subprotocol: String?
    private let configuration: Configuration
    private let inbound: Mutex<Inbound>
    private let writeLock = WriteLock()
    /// Whether a close frame was sent; no data frame may follow it.
    private let isCloseSent = Atomic<Bool>(false)
    /// A close frame that could not be written because a writer held the lock: the holder writes it
    /// before it lets go (see ``sendCloseWithoutWaiting(code:reason:)``).
    private let pendingClose = Mutex<[UInt8]?>(nil)

    /// What the reader keeps between reads.
    private struct Inbound {
        var decoder: WebSocketFrameDecoder
        /// A data payload longer than a read asked for, and how much of it was returned.
        var pending: [UInt8] = []
        var pendingOffset = 0
        /// Set once the stream has ended: a close frame or EOF was received.
        var isFinished = false
        /// The protocol error that ended the connection.
        var failure: WebSocketError?
    }

    private init(
        stream: any CarrierByteStream,
        role: WebSocketRole,
        subprotocol: String?,
        configuration: Configuration,
        buffered: [UInt8]
    ) {
        self.stream = stream
        self.role = role
        self.subprotocol = subprotocol
        self.configuration = configuration
        var decoder = WebSocketFrameDecoder(
            role: role,
            maximumFrameSize: configuration.maximumFrameSize,
            maximumMessageSize: configuration.maximumMessageSize
        )
        if !buffered.isEmpty { decoder.append(buffered) }
        self.inbound = Mutex(Inbound(decoder: decoder))
    }

    /// The peer's numeric address, for example `"127.0.0.1:50312"`.
    package var remoteDescription: String { self.stream.remoteDescription }

    // MARK: - Opening

    /// Connects to a WebSocket server and performs the client's opening handshake, offering
    /// subprotocol `mqtt`.
    ///
    /// Suspends for the TCP connection and the server's answer; bound it with a timeout.
    ///
    /// - Parameters:
    ///   - host: The server's host name or IP literal (IPv6 without brackets).
    ///   - port: The server's port.
    ///   - path: The request path, for example `/mqtt`.
    ///   - configuration: The limits of the connection.
    /// - Throws: ``SocketError``; ``WebSocketError`` `.handshakeFailed` (the server refused, answered
    ///   something malformed or larger than the handshake limit, or closed); `CancellationError`.
    package static func connect(
        host: String,
        port: Int,
        path: String = "/",
        configuration: Configuration = Configuration()
    ) async throws -> WebSocketConnection {
        let tcp = try await TCPConnection.connect(host: host, port: port)
        return try await Self.connect(over: tcp, host: host, port: port, path: path, configuration: configuration)
    }

    /// Performs the client's opening handshake over an open stream (TLS for `wss://`), offering
    /// subprotocol `mqtt`. Closes `stream` when it throws.
    ///
    /// - Parameters:
    ///   - stream: The connection to the server.
    ///   - host: The server's host name, for the `Host` field.
    ///   - port: The server's port, for the `Host` field.
    ///   - path: The request path, for example `/mqtt`.
    ///   - configuration: The limits of the connection.
    /// - Throws: As ``connect(host:port:path:configuration:)``.
    package static func connect(
        over stream: any CarrierByteStream,
        host: String,
        port: Int,
        path: String = "/",
        configuration: Configuration = Configuration()
    ) async throws -> WebSocketConnection {
        do {
            var generator = SystemRandomNumberGenerator()
            let key = WebSocketHandshake.makeKey(using: &generator)
            let request = WebSocketHandshake.request(host: host, port: port, path: path, key: key)
            try await stream.write(request.encoded)
            let head: HTTPHead?
            let rest: [UInt8]
            do {
                (head, rest) = try await Self.readHead(from: stream, limit: configuration.maximumHandshakeSize)
            } catch let error as WebSocketError {
                throw WebSocketError(.handshakeFailed, error.message)
            }
            guard let head else {
                throw WebSocketError(.handshakeFailed, "the server's response is not valid HTTP")
            }
            let subprotocol = try WebSocketHandshake.validate(response: head, key: key)
            return WebSocketConnection(
                stream: stream,
                role: .client,
                subprotocol: subprotocol,
                configuration: configuration,
                buffered: rest
            )
        } catch {
            stream.close()
            throw error
        }
    }

    /// Performs the server's opening handshake on an accepted connection.
    ///
    /// Reads the request (at most ``Configuration/maximumHandshakeSize`` bytes), answers it (see
    /// ``WebSocketHandshake/answer(to:)``) and returns the connection once the 101 response is
    /// written. A refused, malformed or oversized request is answered with 400, 426 or 431 and the
    /// connection is closed. Suspends while the client is silent: bound it with a timeout that closes
    /// `stream`.
    ///
    /// - Throws: ``WebSocketError`` `.handshakeFailed`; ``SocketError``; `CancellationError`.
    package static func accept(
        _ stream: any CarrierByteStream,
        configuration: Configuration = Configuration()
    ) async throws -> WebSocketConnection {
        do {
            let head: HTTPHead?
            let rest: [UInt8]
            do {
                (head, rest) = try await Self.readHead(from: stream, limit: configuration.maximumHandshakeSize)
            } catch let error as WebSocketError where error.code == .messageTooBig {
                await Self.refuse(stream, with: WebSocketHandshake.tooLarge)
                throw WebSocketError(.handshakeFailed, error.message)
            }
            guard let head else {
                await Self.refuse(stream, with: WebSocketHandshake.badRequest)
                throw WebSocketError(.handshakeFailed, "the request is not valid HTTP")
            }
            switch WebSocketHandshake.answer(to: head) {
            case .refuse(let response, let reason):
                await Self.refuse(stream, with: response)
                throw WebSocketError(.handshakeFailed, "refused the opening handshake: \(reason)")
            case .accept(let response, let subprotocol):
                try await stream.write(response.encoded)
                return WebSocketConnection(
                    stream: stream,
                    role: .server,
                    subprotocol: subprotocol,
                    configuration: configuration,
                    buffered: rest
                )
            }
        } catch {
            stream.close()
            throw error
        }
    }

    /// Sends an error response, if the socket takes it at once, and ends the connection gracefully:
    /// FIN, then what the client still sends is read and dropped (at most 64 KiB, until it closes),
    /// so that closing with unread bytes does not reset the connection before the client has read
    /// the response. The caller's timeout bounds the wait.
    private static func refuse(_ stream: any CarrierByteStream, with response: HTTPHead) async {
        let response = response.encoded
        guard stream.writeWithoutWaiting(response) == response.count else { return }
        stream.shutdownOutputWithoutWaiting()
        var drained = 0
        while drained < 1 << 16, let bytes = try? await stream.read(), !bytes.isEmpty { drained += bytes.count }
    }

    /// Reads an HTTP head of at most `limit` bytes.
    ///
    /// - Returns: The parsed head (`nil` if malformed) and the bytes received after it.
    /// - Throws: ``WebSocketError`` `.messageTooBig` beyond `limit`, `.handshakeFailed` at EOF.
    private static func readHead(
        from stream: any CarrierByteStream,
        limit: Int
    ) async throws -> (HTTPHead?, [UInt8]) {
        var buffer: [UInt8] = []
        while true {
            let bytes = try await stream.read(maxBytes: max(1, limit + 1 - buffer.count))
            guard !bytes.isEmpty else {
                throw WebSocketError(.handshakeFailed, "the peer closed the connection during the handshake")
            }
            let searched = buffer.count
            buffer += bytes
            if let end = HTTPHead.end(in: buffer, searched: searched), end <= limit {
                let head = HTTPHead(parsing: buffer[..<end])
                // Whatever followed the head is the first frames; read at most `limit + 1` bytes in
                // all, so that is little.
                return (head, Array(buffer[end...]))
            }
            if buffer.count > limit {
                throw WebSocketError(.messageTooBig, "a handshake head larger than \(limit) bytes")
            }
        }
    }

    // MARK: - Reading

    /// Reads the next bytes of the data frames' payloads.
    ///
    /// Suspends until data arrives, the stream ends or the task is cancelled. Answers pings, and echoes
    /// a close frame, on the way.
    ///
    /// - Parameter maxBytes: The most bytes to return.
    /// - Returns: Between 1 and `maxBytes` bytes, or an empty array at the end of the stream: a close
    ///   frame arrived, or the peer closed TCP.
    /// - Throws: ``WebSocketError`` for a frame that breaks RFC 6455 or the limits, or a text frame
    ///   (after sending the peer a close frame with the code and closing); ``SocketError``;
    ///   `CancellationError`.
    package func read(maxBytes: Int = 65_536) async throws -> [UInt8] {
        let limit = max(1, maxBytes)
        while true {
            switch self.inbound.withLock({ Self.step(&$0, maxBytes: limit) }) {
            case .data(let bytes):
                return bytes
            case .end:
                return []
            case .failed(let error):
                throw error
            case .violation(let error):
                self.sendCloseWithoutWaiting(code: error.closeCode, reason: error.message)
                self.close()
                throw error
            case .ping(let payload):
                // Once our close frame is out nothing else may follow it: the ping goes unanswered,
                // and reading goes on until the peer's close frame or EOF.
                guard !self.isCloseSent.load(ordering: .relaxed) else { continue }
                do {
                    try await self.send(
                        WebSocketFrame(opcode: .pong, payload: payload).encoded(maskingKey: self.maskingKey())
                    )
                } catch let error as WebSocketError where error.code == .closed {
                    continue
                }
            case .closeReceived(let code):
                // Echo the code (RFC 6455 §5.5.1) unless we closed first; no data may follow.
                self.sendCloseWithoutWaiting(code: code, reason: "")
                return []
            case .needBytes:
                let bytes = try await self.stream.read(maxBytes: 65_536)
                self.inbound.withLock { state in
                    if bytes.isEmpty { state.isFinished = true } else { state.decoder.append(bytes) }
                }
            }
        }
    }

    private enum ReadStep {
        case data([UInt8])
        case end
        case failed(WebSocketError)
        case violation(WebSocketError)
        case ping([UInt8])
        case closeReceived(UInt16?)
        case needBytes
    }

    /// Decides the reader's next step from the buffered frames.
    private static func step(_ state: inout Inbound, maxBytes: Int) -> ReadStep {
        if state.pendingOffset < state.pending.count {
            let end = min(state.pending.count, state.pendingOffset + maxBytes)
            let bytes = Array(state.pending[state.pendingOffset..<end])
            state.pendingOffset = end
            if end == state.pending.count {
                state.pending = []
                state.pendingOffset = 0
            }
            return .data(bytes)
        }
        if let failure = state.failure { return .failed(failure) }
        if state.isFinished { return .end }
        while true {
            let frame: WebSocketFrame
            do {
                guard let next = try state.decoder.next() else { return .needBytes }
                frame = next
            } catch {
                state.failure = error
                return .violation(error)
            }
            switch frame.opcode {
            case .binary, .continuation:
                guard !frame.payload.isEmpty else { continue }
                guard frame.payload.count > maxBytes else { return .data(frame.payload) }
                state.pending = frame.payload
                state.pendingOffset = maxBytes
                return .data(Array(frame.payload[..<maxBytes]))
            case .text:
                let error = WebSocketError(
                    .unsupportedData,
                    closeCode: 1003,
                    "a text frame; MQTT is carried in binary frames only"
                )
                state.failure = error
                return .violation(error)
            case .ping:
                return .ping(frame.payload)
            case .pong:
                continue
            case .close:
                state.isFinished = true
                return .closeReceived(WebSocketFrameDecoder.closeCode(of: frame))
            }
        }
    }

    // MARK: - Writing

    /// Sends `bytes` as one binary frame (several if longer than
    /// ``Configuration/maximumOutgoingFrameSize``).
    ///
    /// - Throws: ``WebSocketError`` `.closed` after a close frame was sent or received;
    ///   ``SocketError``; `CancellationError`.
    package func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        try await self.send(self.dataFrames(bytes))
    }

    /// Sends the buffers, concatenated, as ``write(_:)`` does.
    package func write(contentsOf chunks: [[UInt8]]) async throws {
        switch chunks.count {
        case 0: return
        case 1: try await self.write(chunks[0])
        default: try await self.write(chunks.flatMap { $0 })
        }
    }

    /// Encodes `payload` as binary frames of at most ``Configuration/maximumOutgoingFrameSize`` bytes.
    private func dataFrames(_ payload: [UInt8]) -> [UInt8] {
        let frameSize = self.configuration.maximumOutgoingFrameSize
        let frameCount = (payload.count + frameSize - 1) / frameSize
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payload.count + 14 * frameCount)
        var start = 0
        while start < payload.count {
            let end = min(payload.count, start + frameSize)
            let key = self.maskingKey()
            WebSocketFrame.appendHeader(
                fin: true,
                opcode: .binary,
                payloadLength: end - start,
                maskingKey: key,
                to: &bytes
            )
            let payloadStart = bytes.count
            bytes.append(contentsOf: payload[start..<end])
            if let key {
                bytes.withUnsafeMutableBufferPointer { buffer in
                    WebSocketFrame.mask(
                        UnsafeMutableBufferPointer(rebasing: buffer[payloadStart...]),
                        key: key,
                        offset: 0
                    )
                }
            }
            start = end
        }
        return bytes
    }

    /// A fresh masking key for a client's frame (from the system's cryptographic generator, as RFC
    /// 6455 §5.3 asks); `nil` for a server.
    private func maskingKey() -> UInt32? {
        guard self.role == .client else { return nil }
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }

    /// Writes encoded frames under the write lock.
    private func send(_ frames: [UInt8]) async throws {
        try await self.writeLock.lock(closedError: SocketError.closed("write"))
        defer {
            self.writePendingClose()
            self.writeLock.unlock()
        }
        guard !self.isCloseSent.load(ordering: .relaxed) else {
            throw WebSocketError(.closed, "the connection is closing")
        }
        try await self.stream.write(frames)
    }

    /// Sends a close frame if none was sent yet, only if it goes out at once: a peer that does not
    /// read cannot hold a closing connection. Data written after it is refused.
    ///
    /// While a writer holds the lock the frame is left for it, and it writes the frame right after
    /// its own (``writePendingClose()``): frames must not interleave. Trying the lock once more after
    /// leaving the frame closes the gap where the writer let go in between.
    private func sendCloseWithoutWaiting(code: UInt16?, reason: String) {
        guard !self.isCloseSent.exchange(true, ordering: .relaxed) else { return }
        let frame = WebSocketFrame.close(code: code, reason: reason).encoded(maskingKey: self.maskingKey())
        self.pendingClose.withLock { $0 = frame }
        guard self.writeLock.tryLock() else { return }
        self.writePendingClose()
        self.writeLock.unlock()
    }

    /// Writes the pending close frame, if any; called with the write lock held. A socket that takes
    /// none of it (its buffer is full) gets none: the peer sees FIN without a close frame (code 1006),
    /// and what was written before still arrives. A socket that takes part of it would leave the peer a
    /// truncated frame before FIN, so then the connection is closed at once instead.
    private func writePendingClose() {
        guard let frame = self.pendingClose.withLock({ $0.take() }) else { return }
        let written = self.stream.writeWithoutWaiting(frame)
        if written > 0 && written < frame.count { self.stream.close() }
    }

    // MARK: - Closing

    /// Marks this side as sending something it waits for an answer to (see
    /// ``TCPConnection/noteExchange()``).
    package func noteExchange() {
        self.stream.noteExchange()
    }

    /// Starts the closing handshake: sends a close frame with code 1000 (if the socket takes it at
    /// once) and half-closes the stream below. Reads still work until the peer's close frame or EOF.
    package func shutdownOutput() {
        self.sendCloseWithoutWaiting(code: 1000, reason: "")
        self.stream.shutdownOutputWithoutWaiting()
    }

    /// Closes the connection at once, without a closing handshake. Idempotent; pending reads and
    /// writes throw.
    package func close() {
        self.stream.close()
        self.writeLock.close(SocketError.closed("write"))
    }

    /// Whether ``close()`` has been called.
    package var isClosed: Bool { self.stream.isClosed }
}
