#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A listening TCP socket that accepts connections asynchronously.
///
/// The socket is non-blocking and registered with the shared reactor; ``accept()`` suspends
/// the calling task while no connection is pending. `SO_REUSEADDR` is set, so a listener can rebind a
/// port that still has connections in `TIME_WAIT`.
package final class TCPListener: Sendable {
    private let handle: SocketHandle

    /// The port the listener is bound to (useful after binding port 0).
    package let port: Int

    private init(handle: SocketHandle, port: Int) {
        self.handle = handle
        self.port = port
    }

    deinit {
        self.handle.close()
    }

    /// Binds and listens.
    ///
    /// - Parameters:
    ///   - host: The local address: an IPv4/IPv6 literal or a resolvable name. Defaults to loopback.
    ///   - port: The port, or 0 for a free port chosen by the system (read it back with ``port``).
    ///   - backlog: The length of the pending-connection queue.
    /// - Throws: ``SocketError`` if the address cannot be resolved or bound.
    package static func bind(host: String = "127.0.0.1", port: Int = 0, backlog: Int32 = 1024) throws -> TCPListener {
        let addresses = try SocketAddress.resolve(host: host, port: port, passive: true)
        var lastError = SocketError(errno: EADDRNOTAVAIL, call: "bind")
        for address in addresses {
            let fd = try Syscalls.makeStreamSocket(family: address.family)
            do {
                try Syscalls.setOption(
                    fd,
                    level: SOL_SOCKET,
                    name: SO_REUSEADDR,
                    value: 1,
                    call: "setsockopt(SO_REUSEADDR)"
                )
                let bound = address.withSockAddr { PlatformShims.bind(fd, $0, $1) }
                guard bound == 0 else { throw SocketError(errno: errno, call: "bind(\(address.description))") }
                guard listen(fd, backlog) == 0 else { throw SocketError(errno: errno, call: "listen") }
                let boundPort = SocketAddress.local(of: fd)?.port ?? port
                let handle = try SharedReactor.instance.register(fd: fd)
                return TCPListener(handle: handle, port: boundPort)
            } catch let error as SocketError {
                Syscalls.closeUnregistered(fd)
                lastError = error
            }
        }
        throw lastError
    }

    /// Waits for the next incoming connection.
    ///
    /// Suspends while no connection is pending. Only one task may wait in `accept()` at a time.
    ///
    /// - Returns: The accepted connection, non-blocking, with `TCP_NODELAY` set.
    /// - Throws: `CancellationError` if the task is cancelled while waiting; ``SocketError`` with
    ///   ``SocketError/isClosed`` after ``close()``, or the `accept` error (for example `EMFILE`).
    package func accept() async throws -> TCPConnection {
        let fd: Int32 = try await self.handle.perform(.read, call: "accept") { listenFD in
            while true {
                let fd = Syscalls.acceptNonBlockingCloseOnExec(listenFD)
                if fd >= 0 { return .done(fd) }
                let code = errno
                // The pending connection died before we took it: try the next one.
                if code == EINTR || code == ECONNABORTED || code == EPROTO { continue }
                return Syscalls.isWouldBlock(code) ? .wouldBlock : .failed(code)
            }
        }
        do {
            return try TCPConnection.adopt(fd: fd)
        } catch {
            Syscalls.closeUnregistered(fd)
            throw error
        }
    }

    /// Stops listening. Idempotent; a pending ``accept()`` throws a closed ``SocketError``.
    package func close() {
        self.handle.close()
    }
}
