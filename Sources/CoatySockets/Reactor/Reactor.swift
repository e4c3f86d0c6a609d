#if os(Linux)
    import Glibc
    import Synchronization

    /// The single epoll event loop that drives every socket of the process.
    ///
    /// ## Why a thread
    ///
    /// Swift concurrency has no portable way to wait for file-descriptor readiness. The reactor therefore
    /// owns one dedicated POSIX thread, started lazily the first time a socket is created and kept for the
    /// life of the process. It is the only long-lived thread in the library: it blocks in `epoll_wait`
    /// and, when a socket becomes readable or writable, resumes the continuation of the task waiting on
    /// it. The I/O itself (`recv`, `send`, `accept`) runs on the awaiting task, never on this thread.
    ///
    /// Sockets are registered edge-triggered for input and output at creation (``SocketHandle``), so a
    /// readiness edge is never lost: each handle counts the edges it has seen, and an operation that got
    /// `EAGAIN` only suspends if no edge arrived since it tried.
    final class Reactor: Sendable {
        /// The process-wide reactor, created (and its thread started) on first use.
        static let shared: Reactor = {
            let reactor = Reactor()
            reactor.startThread()
            return reactor
        }()

        private let epoll: Epoll
        private let epollFD: Int32
        private let handles = Mutex<[UInt64: SocketHandle]>([:])
        private let nextID = Atomic<UInt64>(1)

        private init() {
            // Writing to a socket whose peer has gone must raise EPIPE, not kill the process. Sends also
            // pass MSG_NOSIGNAL; ignoring the signal covers every other path once for the whole process.
            _ = signal(SIGPIPE, SIG_IGN)
            guard let epoll = Epoll() else {
                preconditionFailure("CoatySockets: epoll is not available in this C library")
            }
            let fd = epoll.create()
            precondition(fd >= 0, "CoatySockets: epoll_create1 failed with errno \(errno)")
            self.epoll = epoll
            self.epollFD = fd
        }

        private func startThread() {
            var thread = pthread_t()
            let context = Unmanaged.passRetained(self).toOpaque()
            let result = pthread_create(
                &thread,
                nil,
                { context in
                    guard let context else { return nil }
                    let reactor = Unmanaged<Reactor>.fromOpaque(context).takeRetainedValue()
                    reactor.run()
                },
                context
            )
            precondition(result == 0, "CoatySockets: cannot start the reactor thread (error \(result))")
            pthread_detach(thread)
        }

        /// Creates a handle for a non-blocking descriptor and registers it with epoll.
        func register(fd: Int32) throws(SocketError) -> SocketHandle {
            let id = self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
            let handle = SocketHandle(fd: fd, id: id, reactor: self)
            self.handles.withLock { $0[id] = handle }
            let events = Epoll.input | Epoll.output | Epoll.readHangUp | Epoll.edgeTriggered
            if self.epoll.control(self.epollFD, operation: Epoll.controlAdd, fd: fd, events: events, data: id) != 0 {
                let code = errno
                _ = self.handles.withLock { $0.removeValue(forKey: id) }
                throw SocketError(errno: code, call: "epoll_ctl")
            }
            return handle
        }

        /// Removes a handle before its descriptor is closed.
        func deregister(_ handle: SocketHandle) {
            _ = self.handles.withLock { $0.removeValue(forKey: handle.id) }
            _ = self.epoll.control(self.epollFD, operation: Epoll.controlDelete, fd: handle.fd, events: 0, data: 0)
        }

        private func run() -> Never {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * Epoll.eventStride, alignment: 8)
            while true {
                let count = self.epoll.wait(self.epollFD, into: buffer, timeoutMilliseconds: -1)
                if count < 0 {
                    if errno == EINTR { continue }
                    preconditionFailure("CoatySockets: epoll_wait failed with errno \(errno)")
                }
                for index in 0..<Int(count) {
                    let (flags, id) = Epoll.event(at: index, in: buffer)
                    guard let handle = self.handles.withLock({ $0[id] }) else { continue }
                    let failed = flags & (Epoll.error | Epoll.hangUp) != 0
                    let readable = failed || flags & (Epoll.input | Epoll.readHangUp) != 0
                    let writable = failed || flags & Epoll.output != 0
                    handle.signal(readable: readable, writable: writable)
                }
            }
        }
    }
#else
    #error(
        "CoatySockets: the reactor is Linux-only for now (epoll); a kqueue backend for Darwin is not implemented yet"
    )
#endif
