#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every difference between Linux (Glibc) and Darwin that the socket layer meets, in one place.
///
/// The rest of the module is written once against POSIX and calls these functions wherever the two C
/// libraries differ: in spelling (`SOCK_STREAM` is an enum on Glibc, an `Int32` on Darwin; `pthread_t`
/// is an integer on Glibc, a pointer on Darwin), in what they offer (`accept4`, `SOCK_NONBLOCK`,
/// `MSG_NOSIGNAL`, `TCP_QUICKACK` and `eventfd` are Linux-only; Darwin has `SO_NOSIGPIPE` instead of
/// `MSG_NOSIGNAL`), or in a name that a method of ours shadows (`bind`, `connect`, `send`, `close`).
///
/// The Darwin branches use only functions and constants declared in Darwin's headers, with their
/// Darwin types; they have not been compiled yet (see the README's Platforms section). The epoll
/// binding (`Epoll`) needs no branch: it is looked up at run time and is absent on Darwin.
enum PlatformShims {
    /// `SOCK_STREAM` as the `Int32` that `socket` and `addrinfo.ai_socktype` take.
    static var streamSocketType: Int32 {
        #if canImport(Glibc)
            Int32(SOCK_STREAM.rawValue)
        #elseif canImport(Darwin)
            SOCK_STREAM
        #endif
    }

    /// Creates a non-blocking, close-on-exec TCP socket that never raises `SIGPIPE`; -1 with `errno`
    /// on failure.
    ///
    /// Linux sets both flags atomically in `socket`. Darwin has no such flags, so they are set with
    /// `fcntl` right after, together with `SO_NOSIGPIPE` (Darwin's `send` has no `MSG_NOSIGNAL`).
    static func makeStreamSocket(family: Int32) -> Int32 {
        #if canImport(Glibc)
            let type = Self.streamSocketType | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            return socket(family, type, 0)
        #elseif canImport(Darwin)
            let fd = socket(family, Self.streamSocketType, 0)
            guard fd >= 0 else { return fd }
            return Self.prepareDarwinSocket(fd)
        #endif
    }

    /// Accepts a connection as a non-blocking, close-on-exec descriptor that never raises `SIGPIPE`;
    /// -1 with `errno` on failure.
    ///
    /// `accept4` sets both flags atomically, so a child process spawned at the same moment never
    /// inherits the socket. It is looked up at run time because Swift's Glibc module does not declare
    /// it; without it (and on Darwin, which has no `accept4`) the flags are set by `fcntl` right after
    /// `accept`.
    static func acceptNonBlockingCloseOnExec(_ listenFD: Int32) -> Int32 {
        #if canImport(Glibc)
            if let accept4 = Self.accept4 {
                return accept4(listenFD, nil, nil, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            }
            let fd = Glibc.accept(listenFD, nil, nil)
            guard fd >= 0 else { return fd }
            Self.setNonBlockingCloseOnExec(fd)
            return fd
        #elseif canImport(Darwin)
            let fd = Darwin.accept(listenFD, nil, nil)
            guard fd >= 0 else { return fd }
            return Self.prepareDarwinSocket(fd)
        #endif
    }

    #if canImport(Glibc)
        private typealias Accept4 =
            @convention(c) (Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int32) -> Int32

        private static let accept4 = RuntimeSymbol.lookUp("accept4", as: Accept4.self)
    #elseif canImport(Darwin)
        /// Makes a fresh Darwin socket non-blocking, close-on-exec and free of `SIGPIPE`; closes it
        /// and returns -1 (with `errno`) if `SO_NOSIGPIPE` cannot be set.
        private static func prepareDarwinSocket(_ fd: Int32) -> Int32 {
            Self.setNonBlockingCloseOnExec(fd)
            var on: Int32 = 1
            guard setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                let code = errno
                _ = Darwin.close(fd)
                errno = code
                return -1
            }
            return fd
        }
    #endif

    /// Sets `O_NONBLOCK` and `FD_CLOEXEC` on a descriptor (both platforms spell `fcntl` alike).
    static func setNonBlockingCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
    }

    /// One `send` that cannot raise `SIGPIPE`: `MSG_NOSIGNAL` on Linux; on Darwin the socket carries
    /// `SO_NOSIGPIPE` from ``makeStreamSocket(family:)`` or ``acceptNonBlockingCloseOnExec(_:)``.
    static func send(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int {
        #if canImport(Glibc)
            Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
        #elseif canImport(Darwin)
            Darwin.send(fd, buffer.baseAddress, buffer.count, 0)
        #endif
    }

    /// `bind(2)`.
    static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        #if canImport(Glibc)
            Glibc.bind(fd, address, length)
        #elseif canImport(Darwin)
            Darwin.bind(fd, address, length)
        #endif
    }

    /// `connect(2)`.
    static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        #if canImport(Glibc)
            Glibc.connect(fd, address, length)
        #elseif canImport(Darwin)
            Darwin.connect(fd, address, length)
        #endif
    }

    /// `close(2)`.
    /// `open(2)` for a file (a name that ``AppendOnlyFile/open(_:)`` shadows); -1 with `errno` on failure.
    static func openFile(_ path: String, flags: Int32, mode: mode_t) -> Int32 {
        #if canImport(Glibc)
            Glibc.open(path, flags, mode)
        #elseif canImport(Darwin)
            Darwin.open(path, flags, mode)
        #endif
    }

    /// `write(2)` (a name that file types shadow); -1 with `errno` on failure.
    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
            Glibc.write(fd, buffer, count)
        #elseif canImport(Darwin)
            Darwin.write(fd, buffer, count)
        #endif
    }

    /// `rename(2)` (a name that ``FileSystem/rename(_:to:)`` shadows); -1 with `errno` on failure.
    static func rename(_ source: String, _ destination: String) -> Int32 {
        #if canImport(Glibc)
            Glibc.rename(source, destination)
        #elseif canImport(Darwin)
            Darwin.rename(source, destination)
        #endif
    }

    static func close(_ fd: Int32) {
        #if canImport(Glibc)
            _ = Glibc.close(fd)
        #elseif canImport(Darwin)
            _ = Darwin.close(fd)
        #endif
    }

    /// Asks the kernel to acknowledge received data at once (`TCP_QUICKACK`, Linux only; Darwin has no
    /// per-read equivalent, so this does nothing there). Errors are ignored: it is an optimisation.
    static func requestQuickAcknowledgement(_ fd: Int32) {
        #if canImport(Glibc)
            var on: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), Int32(TCP_QUICKACK), &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Makes writing to a connection whose peer has gone raise `EPIPE` instead of killing the process.
    ///
    /// Sends already avoid the signal (``send(_:_:)``); ignoring it covers every other path once for
    /// the whole process.
    static func ignoreBrokenPipeSignal() {
        _ = signal(SIGPIPE, SIG_IGN)
    }

    /// Creates the descriptors a reactor's thread is woken through: readable once something was
    /// written, both non-blocking and close-on-exec. `nil` (with `errno`) on failure.
    ///
    /// On Linux one `eventfd` is both ends (a counter: 8-byte writes, 8-byte reads); it is looked up
    /// at run time because Swift's Glibc module does not declare it, and a pipe stands in without it.
    /// Darwin has no `eventfd` and uses a pipe. Writing and draining 8 bytes works on both.
    static func makeWakeDescriptors() -> (read: Int32, write: Int32)? {
        #if canImport(Glibc)
            if let eventfd = Self.eventfd {
                let fd = eventfd(0, Int32(O_NONBLOCK) | Int32(O_CLOEXEC))
                return fd >= 0 ? (fd, fd) : nil
            }
        #endif
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        Self.setNonBlockingCloseOnExec(fds[0])
        Self.setNonBlockingCloseOnExec(fds[1])
        return (fds[0], fds[1])
    }

    #if canImport(Glibc)
        private typealias EventFD = @convention(c) (UInt32, Int32) -> Int32

        private static let eventfd = RuntimeSymbol.lookUp("eventfd", as: EventFD.self)
    #endif

    /// Starts a detached POSIX thread that runs `body`.
    ///
    /// `pthread_t` is an integer on Glibc and a non-optional pointer on Darwin, and the start
    /// routine's argument is optional on Glibc only; the cast in the routine serves both.
    static func startDetachedThread(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        #if canImport(Glibc)
            var thread = pthread_t()
        #elseif canImport(Darwin)
            var thread: pthread_t?
        #endif
        let result = pthread_create(
            &thread,
            nil,
            { context in
                let body = Unmanaged<ThreadBody>.fromOpaque((context as UnsafeMutableRawPointer?)!).takeRetainedValue()
                body.run()
                return nil
            },
            context
        )
        precondition(result == 0, "CoatySockets: cannot start a thread (error \(result))")
        #if canImport(Glibc)
            pthread_detach(thread)
        #elseif canImport(Darwin)
            pthread_detach(thread!)
        #endif
    }
}

/// The closure a thread from ``PlatformShims/startDetachedThread(_:)`` runs, boxed to pass through
/// `pthread_create`'s context pointer.
private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void

    init(_ run: @escaping @Sendable () -> Void) {
        self.run = run
    }
}
