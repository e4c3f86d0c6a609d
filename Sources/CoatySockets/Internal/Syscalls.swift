#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Thin wrappers around the socket system calls: each retries `EINTR` and maps `EAGAIN` to
/// `.wouldBlock`.
enum Syscalls {
    /// Creates a non-blocking, close-on-exec TCP socket.
    static func makeStreamSocket(family: Int32) throws(SocketError) -> Int32 {
        #if canImport(Glibc)
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
            let type = SOCK_STREAM
        #endif
        let fd = socket(family, type, 0)
        guard fd >= 0 else { throw SocketError(errno: errno, call: "socket") }
        return fd
    }

    /// Sets an integer socket option.
    static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32, call: String) throws(SocketError) {
        var value = value
        guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SocketError(errno: errno, call: call)
        }
    }

    /// Turns Nagle's algorithm off: MQTT packets are small and each one should go out at once.
    static func setNoDelay(_ fd: Int32) throws(SocketError) {
        try Self.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1, call: "setsockopt(TCP_NODELAY)")
    }

    /// The monotonic clock in nanoseconds (`CLOCK_MONOTONIC`, read through the vDSO: no system call).
    static func monotonicNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Asks the kernel to acknowledge received data at once instead of delaying the ACK (Linux; the
    /// kernel falls back to delayed ACKs on its own, so `TCPConnection` asks again after each read
    /// during an exchange).
    ///
    /// A peer that uses Nagle's algorithm (mosquitto does by default) holds a small packet back
    /// while an earlier one is unacknowledged. When the earlier one needs no answer (an UNSUBACK)
    /// and we are waiting for the next one (the response to a request), our delayed ACK (40 ms on
    /// Linux) stalls both sides. Errors are ignored: this is an optimisation.
    static func requestQuickAcknowledgement(_ fd: Int32) {
        #if canImport(Glibc)
            try? Self.setOption(
                fd,
                level: Int32(IPPROTO_TCP),
                name: Int32(TCP_QUICKACK),
                value: 1,
                call: "TCP_QUICKACK"
            )
        #endif
    }

    /// Accepts a connection as a non-blocking, close-on-exec descriptor; -1 with `errno` on failure.
    ///
    /// `accept4` sets both flags atomically, so a child process spawned at the same moment never
    /// inherits the socket. It is looked up at run time because Swift's Glibc module does not declare
    /// it; without it the flags are set by `fcntl` right after `accept`.
    static func acceptNonBlockingCloseOnExec(_ listenFD: Int32) -> Int32 {
        #if canImport(Glibc)
            if let accept4 = Self.accept4 {
                return accept4(listenFD, nil, nil, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            }
            let fd = Glibc.accept(listenFD, nil, nil)
        #else
            let fd = Darwin.accept(listenFD, nil, nil)
        #endif
        guard fd >= 0 else { return fd }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
        return fd
    }

    #if canImport(Glibc)
        private typealias Accept4 =
            @convention(c) (Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int32) ->
            Int32

        private static let accept4 = RuntimeSymbol.lookUp("accept4", as: Accept4.self)
    #endif

    /// Closes a descriptor that was never registered with the reactor.
    static func closeUnregistered(_ fd: Int32) {
        #if canImport(Glibc)
            _ = Glibc.close(fd)
        #else
            _ = Darwin.close(fd)
        #endif
    }

    static func isWouldBlock(_ code: Int32) -> Bool {
        code == EAGAIN || code == EWOULDBLOCK
    }

    /// One `recv`.
    static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> SocketHandle.CallResult<Int> {
        while true {
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            if n >= 0 { return .done(n) }
            let code = errno
            if code == EINTR { continue }
            return Self.isWouldBlock(code) ? .wouldBlock : .failed(code)
        }
    }

    /// One `send` with `MSG_NOSIGNAL` (no SIGPIPE on a broken connection).
    static func send(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> SocketHandle.CallResult<Int> {
        #if canImport(Glibc)
            let flags = Int32(MSG_NOSIGNAL)
        #else
            let flags: Int32 = 0
        #endif
        while true {
            let n = Glibc.send(fd, buffer.baseAddress, buffer.count, flags)
            if n >= 0 { return .done(n) }
            let code = errno
            if code == EINTR { continue }
            return Self.isWouldBlock(code) ? .wouldBlock : .failed(code)
        }
    }
}
