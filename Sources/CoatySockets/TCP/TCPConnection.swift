#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A connected TCP stream with asynchronous reads and writes.
///
/// The socket is non-blocking and driven by the shared epoll reactor: each operation tries its
/// system call first and suspends only on `EAGAIN`. All waits are cancellable. One task may read and
/// another write at the same time; two concurrent reads (or writes) are a programming error and the
/// second throws `EBUSY`.
package final class TCPConnection: Sendable {
    private let handle: SocketHandle

    /// The peer's numeric address, for example `"127.0.0.1:50312"`.
    package let remoteDescription: String
    /// Whether a read that had to wait for data asks the kernel to acknowledge at once (see
    /// `Syscalls.requestQuickAcknowledgement`): set for connections we open, so a client never waits on
    /// a broker's Nagle delay; not for accepted ones, where it would cost a broker throughput.
    private let acknowledgesAtOnce: Bool

    private init(handle: SocketHandle, remoteDescription: String, acknowledgesAtOnce: Bool) {
        self.handle = handle
        self.remoteDescription = remoteDescription
        self.acknowledgesAtOnce = acknowledgesAtOnce
    }

    deinit {
        self.handle.close()
    }

    /// Wraps an accepted non-blocking descriptor.
    static func adopt(fd: Int32) throws(SocketError) -> TCPConnection {
        try Syscalls.setNoDelay(fd)
        let remote = SocketAddress.peer(of: fd)?.description ?? "?"
        let handle = try Reactor.shared.register(fd: fd)
        return TCPConnection(handle: handle, remoteDescription: remote, acknowledgesAtOnce: false)
    }

    /// Connects to a TCP server.
    ///
    /// Tries each resolved address in turn. Suspends until the connection is established.
    ///
    /// - Parameters:
    ///   - host: An IPv4 or IPv6 literal, or a name such as `localhost`.
    ///   - port: The server's port.
    /// - Returns: The connection, with `TCP_NODELAY` set, acknowledging at once data it waited for.
    /// - Throws: ``SocketError`` (for example `ECONNREFUSED`); `CancellationError` if cancelled.
    package static func connect(host: String, port: Int) async throws -> TCPConnection {
        let addresses = try SocketAddress.resolve(host: host, port: port, passive: false)
        var lastError = SocketError(errno: EADDRNOTAVAIL, call: "connect")
        for address in addresses {
            let fd = try Syscalls.makeStreamSocket(family: address.family)
            let handle: SocketHandle
            do {
                try Syscalls.setNoDelay(fd)
                handle = try Reactor.shared.register(fd: fd)
            } catch {
                Syscalls.closeUnregistered(fd)
                throw error
            }
            do {
                try await Self.finishConnect(handle, to: address)
                return TCPConnection(handle: handle, remoteDescription: address.description, acknowledgesAtOnce: true)
            } catch let error as SocketError where !error.isClosed {
                handle.close()
                lastError = error
            } catch {
                handle.close()
                throw error
            }
        }
        throw lastError
    }

    private static func finishConnect(_ handle: SocketHandle, to address: SocketAddress) async throws {
        let call = "connect(\(address.description))"
        let edges = try handle.beginCall(.write, call: call)
        let rc = address.withSockAddr { Glibc.connect(handle.fd, $0, $1) }
        let code = errno
        handle.endCall()
        if rc == 0 { return }
        guard code == EINPROGRESS || code == EINTR else { throw SocketError(errno: code, call: call) }
        try await handle.wait(.write, since: edges, call: call)
        var soError: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try handle.beginCall(.write, call: call)
        let status = getsockopt(handle.fd, SOL_SOCKET, SO_ERROR, &soError, &length)
        let statusErrno = errno
        handle.endCall()
        guard status == 0 else { throw SocketError(errno: statusErrno, call: "getsockopt(SO_ERROR)") }
        guard soError == 0 else { throw SocketError(errno: soError, call: call) }
    }

    /// Reads the next available bytes.
    ///
    /// Suspends until data arrives, the peer closes, or the task is cancelled.
    ///
    /// - Parameter maxBytes: The most bytes to return.
    /// - Returns: Between 1 and `maxBytes` bytes, or an empty array at end of stream (peer sent FIN).
    /// - Throws: ``SocketError`` (closed by ``close()``, `ECONNRESET`, …); `CancellationError`.
    package func read(maxBytes: Int = 65_536) async throws -> [UInt8] {
        let capacity = max(1, maxBytes)
        let acknowledgesAtOnce = self.acknowledgesAtOnce
        var hasWaited = false
        return try await self.handle.perform(.read, call: "read") { fd in
            var failure: SocketHandle.CallResult<[UInt8]> = .wouldBlock
            let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                switch Syscalls.receive(fd, into: UnsafeMutableRawBufferPointer(buffer)) {
                case .done(let n):
                    count = n
                    failure = .done([])
                    // Only data we had to wait for: a stream that keeps the socket busy is acknowledged
                    // often enough anyway, and asking on every read costs throughput.
                    if n > 0, acknowledgesAtOnce, hasWaited { Syscalls.requestQuickAcknowledgement(fd) }
                case .wouldBlock:
                    count = 0
                    failure = .wouldBlock
                    hasWaited = true
                case .failed(let code):
                    count = 0
                    failure = .failed(code)
                }
            }
            if case .done = failure { return .done(bytes) }
            return failure
        }
    }

    /// Writes all of `bytes`.
    ///
    /// Suspends while the socket's send buffer is full (a slow reader), and returns once every byte is
    /// handed to the kernel.
    ///
    /// - Throws: ``SocketError`` (closed, `EPIPE`, `ECONNRESET`, …); `CancellationError` if cancelled
    ///   while waiting, in which case an unknown prefix of `bytes` may have been sent.
    package func write(_ bytes: [UInt8]) async throws {
        var offset = 0
        while offset < bytes.count {
            let start = offset
            let written: Int = try await self.handle.perform(.write, call: "write") { fd in
                bytes.withUnsafeBytes { raw in
                    Syscalls.send(fd, UnsafeRawBufferPointer(rebasing: raw[start...]))
                }
            }
            offset += written
        }
    }

    /// Writes several buffers in order, as if concatenated.
    ///
    /// Small chunks are gathered into one buffer so that a batch costs one system call; this is the
    /// call a writer uses to coalesce queued packets.
    ///
    /// - Throws: Like ``write(_:)``.
    package func write(contentsOf chunks: [[UInt8]]) async throws {
        switch chunks.count {
        case 0:
            return
        case 1:
            try await self.write(chunks[0])
        default:
            var total = 0
            for chunk in chunks { total += chunk.count }
            var gathered: [UInt8] = []
            gathered.reserveCapacity(total)
            for chunk in chunks { gathered.append(contentsOf: chunk) }
            try await self.write(gathered)
        }
    }

    /// Half-closes the connection: sends FIN, reads still work. Does nothing after ``close()``.
    package func shutdownOutput() {
        guard (try? self.handle.beginCall(.write, call: "shutdown")) != nil else { return }
        _ = shutdown(self.handle.fd, Int32(SHUT_WR))
        self.handle.endCall()
    }

    /// Closes the connection. Idempotent; pending reads and writes throw a closed ``SocketError``.
    package func close() {
        self.handle.close()
    }

    /// Whether ``close()`` has been called.
    package var isClosed: Bool {
        self.handle.isClosed
    }
}
