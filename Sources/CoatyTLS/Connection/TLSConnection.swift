package import CoatySockets
import Synchronization

/// A TLS connection over TCP: a ``ByteStreamConnection`` whose bytes are encrypted and
/// authenticated, as MQTT over `mqtts://` is carried.
///
/// OpenSSL works on memory buffers only (``TLSEngine``); the socket I/O stays ours, non-blocking on
/// the reactor. The reader feeds what arrives and decrypts; the writer encrypts and sends. Only the
/// writer ever writes to the socket: TLS output that reading causes (a TLS 1.3 key update answer)
/// waits in the engine and goes out before the next write, so reading and writing never contend
/// for the socket, and one task may read while another writes, as on ``TCPConnection``.
package final class TLSConnection: CarrierByteStream, DirectByteStream {
    private let tcp: TCPConnection
    private let engine: Mutex<TLSEngine>
    /// Whether a read is under way, so that a failed write knows whether it may read (see
    /// ``peerAlert()``).
    private let isReading = Atomic<Bool>(false)
    /// The TLS version agreed, for example `"TLSv1.3"`.
    package let version: String
    /// The ALPN protocol the server chose, if any.
    package let negotiatedProtocol: String?

    /// Wraps a connection whose handshake `engine` has completed (internal for tests, which run the
    /// handshake in memory).
    init(tcp: TCPConnection, engine: sending TLSEngine) {
        self.tcp = tcp
        self.version = engine.version
        self.negotiatedProtocol = engine.negotiatedProtocol
        self.engine = Mutex(engine)
    }

    /// The peer's numeric address, for example `"127.0.0.1:50312"`.
    package var remoteDescription: String { self.tcp.remoteDescription }

    // MARK: - Opening

    /// Connects to a TLS server and performs the client handshake, verifying the server's
    /// certificate and `serverName` unless the context's verification is off.
    ///
    /// Suspends for the TCP connection and the handshake; bound it with a timeout.
    ///
    /// - Parameters:
    ///   - host: The server's host name or IP literal (IPv6 without brackets).
    ///   - port: The server's port.
    ///   - serverName: The name sent as SNI and required in the certificate; `host` if `nil`.
    ///   - context: A client context.
    /// - Throws: ``TLSError`` (an untrusted, expired or wrong-host certificate, a refused handshake);
    ///   ``SocketError``; `CancellationError`.
    package static func connect(
        host: String,
        port: Int,
        serverName: String? = nil,
        context: TLSContext
    ) async throws -> TLSConnection {
        let engine = try TLSEngine(context: context, peerName: serverName ?? host)
        let tcp = try await TCPConnection.connect(host: host, port: port)
        return try await Self.handshake(tcp, engine: engine)
    }

    /// Performs the server handshake on an accepted connection.
    ///
    /// Suspends while the client is silent: bound it with a timeout that closes `tcp`.
    ///
    /// - Throws: ``TLSError`` (not TLS, no common version, a missing or untrusted client
    ///   certificate); ``SocketError``; `CancellationError`. `tcp` is closed when this throws.
    package static func accept(_ tcp: TCPConnection, context: TLSContext) async throws -> TLSConnection {
        let engine: TLSEngine
        do {
            engine = try TLSEngine(context: context, peerName: tcp.remoteDescription)
        } catch {
            tcp.close()
            throw error
        }
        return try await Self.handshake(tcp, engine: engine)
    }

    /// Runs the handshake to its end; closes `tcp` when it fails.
    private static func handshake(_ tcp: TCPConnection, engine: sending TLSEngine) async throws -> TLSConnection {
        do {
            while true {
                switch engine.handshake() {
                case .done(let output):
                    if !output.isEmpty { try await tcp.write(output) }
                    return TLSConnection(tcp: tcp, engine: engine)
                case .needsInput(let output):
                    if !output.isEmpty { try await tcp.write(output) }
                    let bytes = try await tcp.read(maxBytes: 1 << 16)
                    guard !bytes.isEmpty else {
                        throw TLSError(
                            .handshakeFailed,
                            "\(engine.peerName) closed the connection during the TLS handshake"
                        )
                    }
                    engine.feed(bytes)
                case .failed(let error, let output):
                    // The alert that tells the peer why, if the socket takes it at once.
                    if !output.isEmpty { _ = tcp.writeWithoutWaiting(output) }
                    throw error
                }
            }
        } catch {
            tcp.close()
            throw error
        }
    }

    // MARK: - Reading and writing

    /// Reads the next decrypted bytes.
    ///
    /// Suspends until data arrives, the stream ends or the task is cancelled.
    ///
    /// - Returns: Between 1 and `maxBytes` bytes, or an empty array at the end of the stream (the
    ///   peer's close_notify, or TCP EOF).
    /// - Throws: ``TLSError`` for a record that fails to decrypt or an alert from the peer;
    ///   ``SocketError``; `CancellationError`.
    package func read(maxBytes: Int = 65_536) async throws -> [UInt8] {
        self.isReading.store(true, ordering: .relaxed)
        defer { self.isReading.store(false, ordering: .relaxed) }
        let limit = max(1, maxBytes)
        while true {
            if let bytes = try self.decrypted(maxBytes: limit) { return bytes }
            // One TCP read's worth at a time, and only when OpenSSL asks for more: the encrypted
            // bytes held never exceed one record plus one read.
            self.feed(try await self.tcp.read(maxBytes: 1 << 16))
        }
    }

    /// What the engine has for a read: decrypted bytes, none at the end of the stream, or `nil` when
    /// it needs more input.
    private func decrypted(maxBytes: Int) throws(TLSError) -> [UInt8]? {
        switch self.engine.withLock({ $0.read(maxBytes: maxBytes) }) {
        case .data(let bytes): return bytes
        case .end: return []
        case .failed(let error): throw error
        case .needsInput: return nil
        }
    }

    /// Hands the engine what a read from the socket brought; nothing means the peer closed.
    private func feed(_ encrypted: [UInt8]) {
        self.engine.withLock { engine in
            if encrypted.isEmpty { engine.peerClosed() } else { engine.feed(encrypted) }
        }
    }

    /// Reads like ``read(maxBytes:)``, while the reactor's thread decrypts what each socket read of at
    /// most `limit` encrypted bytes brings and passes it to `consume` (see
    /// ``DirectByteStream/read(maxBytes:handlingUpTo:_:)``).
    ///
    /// What `consume` was not given when it returned `false` stays decrypted in the engine, and the
    /// next read returns it first. An alert, a decryption failure or the end of the stream goes back
    /// to the caller: the task reads it from the engine.
    package func read(
        maxBytes: Int,
        handlingUpTo limit: Int,
        _ consume: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool
    ) async throws -> DirectReadOutcome {
        self.isReading.store(true, ordering: .relaxed)
        defer { self.isReading.store(false, ordering: .relaxed) }
        let maxBytes = max(1, maxBytes)
        while true {
            if let bytes = try self.decrypted(maxBytes: maxBytes) { return .bytes(bytes) }
            let outcome = try await self.tcp.read(maxBytes: 1 << 16, handlingUpTo: limit) { encrypted in
                self.decryptInline(encrypted, limit: limit, consume)
            }
            guard case .bytes(let encrypted) = outcome else { return .handled }
            self.feed(encrypted)
        }
    }

    /// The reactor thread's part of ``read(maxBytes:handlingUpTo:_:)``: feeds `encrypted` to the
    /// engine and hands `consume` what it decrypts; returns whether to keep waiting.
    ///
    /// The engine's lock is not held while `consume` runs: handling a message may write to this
    /// connection, which encrypts under the same lock.
    private func decryptInline(
        _ encrypted: UnsafeRawBufferPointer,
        limit: Int,
        _ consume: (UnsafeRawBufferPointer) -> Bool
    ) -> Bool {
        // Both buffers live only for this call, on this thread: the engine copies what it is fed and
        // decrypts into the buffer it is handed, keeping neither. The wrappers only let them into the
        // lock's closure.
        let input = CallScoped(encrypted)
        return withUnsafeTemporaryAllocation(byteCount: max(1, limit), alignment: 1) { storage in
            let buffer = CallScoped(storage)
            var step = self.engine.withLock { engine in
                engine.feed(input.value)
                return engine.read(into: buffer.value)
            }
            while case .data(let count) = step {
                guard consume(UnsafeRawBufferPointer(rebasing: storage[..<count])) else { return false }
                step = self.engine.withLock { $0.read(into: buffer.value) }
            }
            // An end or a failure is the task's to report: it finds it in the engine.
            if case .needsInput = step { return true }
            return false
        }
    }

    /// Encrypts and writes all of `bytes`; suspends while the peer does not keep up.
    ///
    /// - Throws: ``TLSError`` once the connection has failed; ``SocketError``; `CancellationError`.
    package func write(_ bytes: [UInt8]) async throws {
        try await self.write(contentsOf: [bytes])
    }

    /// Encrypts the buffers in order and writes the records in one go.
    package func write(contentsOf chunks: [[UInt8]]) async throws {
        let records = try self.engine.withLock { engine throws(TLSError) in try engine.encrypt(chunks) }
        guard !records.isEmpty else { return }
        try await self.writeRecords(records)
    }

    /// Writes encrypted records; a reset reports the alert the peer sent before it, if any.
    private func writeRecords(_ records: [UInt8]) async throws {
        do {
            try await self.tcp.write(records)
        } catch let error as SocketError where error.isConnectionReset {
            throw await self.peerAlert() ?? error
        }
    }

    /// Encrypts `bytes` and sends what the socket takes of the records at once (see
    /// ``DirectByteStream/sendWithoutWaiting(_:)``); returns the encrypted bytes it did not take,
    /// which ``writeLeftover(_:)`` sends as they are. A connection that can no longer encrypt is
    /// closed, and nothing is left.
    package func sendWithoutWaiting(_ bytes: [UInt8]) -> [UInt8] {
        guard let records = try? self.engine.withLock({ engine throws(TLSError) in try engine.encrypt([bytes]) }) else {
            self.tcp.close()
            return []
        }
        return self.tcp.sendWithoutWaiting(records)
    }

    /// Writes the encrypted bytes ``sendWithoutWaiting(_:)`` left.
    package func writeLeftover(_ leftover: [UInt8]) async throws {
        try await self.writeRecords(leftover)
    }

    /// The alert a peer sent before it closed the connection, if one is waiting and no read is under
    /// way to report it.
    ///
    /// A TLS 1.3 server checks the client's certificate after the client has finished its side of the
    /// handshake, so a refusal (certificate_required, say) arrives as an alert just before the
    /// server resets the connection, often while the client writes its first packet. The write then
    /// fails with only "connection reset"; the alert, already received, says why.
    private func peerAlert() async -> TLSError? {
        guard self.isReading.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else {
            return nil
        }
        defer { self.isReading.store(false, ordering: .relaxed) }
        // After a reset or FIN, reads return what was received, then fail or end: they do not wait.
        for _ in 0..<4 {
            guard let bytes = try? await self.tcp.read(maxBytes: 1 << 16), !bytes.isEmpty else { return nil }
            let step = self.engine.withLock { engine in
                engine.feed(bytes)
                return engine.read(maxBytes: 1)
            }
            if case .failed(let error) = step { return error }
        }
        return nil
    }

    /// Encrypts `bytes` and sends the records if the socket takes them at once, for a last short
    /// message (a WebSocket close frame). The caller must not be writing concurrently.
    ///
    /// - Returns: `bytes.count` when sent; 0 otherwise. A record the socket did not take whole cannot
    ///   be sent later (TLS numbers its records), so the connection is then closed.
    package func writeWithoutWaiting(_ bytes: [UInt8]) -> Int {
        guard let records = try? self.engine.withLock({ engine throws(TLSError) in try engine.encrypt([bytes]) }) else {
            return 0
        }
        guard self.tcp.writeWithoutWaiting(records) == records.count else {
            self.tcp.close()
            return 0
        }
        return bytes.count
    }

    // MARK: - Closing

    /// Marks this side as sending something it waits for an answer to (see
    /// ``TCPConnection/noteExchange()``).
    package func noteExchange() {
        self.tcp.noteExchange()
    }

    /// Sends close_notify (if the socket takes it at once) and half-closes TCP. Reads still work.
    package func shutdownOutput() {
        self.shutdownOutputWithoutWaiting()
    }

    /// Sends close_notify (if the socket takes it at once) and half-closes TCP. Reads still work.
    package func shutdownOutputWithoutWaiting() {
        let notify = self.engine.withLock { $0.closeNotify() }
        let written = notify.isEmpty ? 0 : self.tcp.writeWithoutWaiting(notify)
        // Part of a record before FIN would look like an attack to the peer: close at once instead.
        if written > 0 && written < notify.count {
            self.tcp.close()
            return
        }
        self.tcp.shutdownOutput()
    }

    /// Closes the connection at once, without close_notify. Idempotent; pending reads and writes throw.
    package func close() {
        self.tcp.close()
    }

    /// Whether ``close()`` has been called.
    package var isClosed: Bool { self.tcp.isClosed }
}

/// A buffer handed into a lock's closure for the length of one call. Buffers are not `Sendable`, and
/// the engine's lock takes only what may cross regions; the engine keeps no pointer past the call.
private struct CallScoped<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
