#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Thin wrappers around the socket system calls: each retries `EINTR` and maps `EAGAIN` to
/// `.wouldBlock`. Where Linux and Darwin differ they call ``PlatformShims``.
enum Syscalls {
    /// Creates a non-blocking, close-on-exec TCP socket that never raises `SIGPIPE`.
    static func makeStreamSocket(family: Int32) throws(SocketError) -> Int32 {
        let fd = PlatformShims.makeStreamSocket(family: family)
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

    /// The monotonic clock in nanoseconds (`CLOCK_MONOTONIC`; on Linux read through the vDSO, with no
    /// system call).
    static func monotonicNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Asks the kernel to acknowledge received data at once instead of delaying the ACK (Linux's
    /// `TCP_QUICKACK`; nothing elsewhere). The kernel falls back to delayed ACKs on its own, so
    /// `TCPConnection` asks again after each read during an exchange.
    ///
    /// A peer that uses Nagle's algorithm (mosquitto does by default) holds a small packet back
    /// while an earlier one is unacknowledged. When the earlier one needs no answer (an UNSUBACK)
    /// and we are waiting for the next one (the response to a request), our delayed ACK (40 ms on
    /// Linux) stalls both sides. Errors are ignored: this is an optimisation.
    static func requestQuickAcknowledgement(_ fd: Int32) {
        PlatformShims.requestQuickAcknowledgement(fd)
    }

    /// Accepts a connection as a non-blocking, close-on-exec descriptor; -1 with `errno` on failure
    /// (see ``PlatformShims/acceptNonBlockingCloseOnExec(_:)``).
    static func acceptNonBlockingCloseOnExec(_ listenFD: Int32) -> Int32 {
        PlatformShims.acceptNonBlockingCloseOnExec(listenFD)
    }

    /// Closes a descriptor that was never registered with the reactor.
    static func closeUnregistered(_ fd: Int32) {
        PlatformShims.close(fd)
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

    /// One `send` that cannot raise `SIGPIPE` on a broken connection.
    static func send(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> SocketHandle.CallResult<Int> {
        while true {
            let n = PlatformShims.send(fd, buffer)
            if n >= 0 { return .done(n) }
            let code = errno
            if code == EINTR { continue }
            return Self.isWouldBlock(code) ? .wouldBlock : .failed(code)
        }
    }
}
