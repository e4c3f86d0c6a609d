import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The epoll event loop: Linux's default ``Reactor``.
///
/// Each socket is registered edge-triggered for input, output and read hang-up once, when its handle
/// is created, and stays registered until it is closed. The thread blocks in `epoll_wait` and reports
/// every edge to its handle, so a waiting operation costs no system call (``watch(_:for:)`` does
/// nothing) and a socket with no waiter costs nothing either.
final class EpollReactor: Reactor {
    private let epoll: Epoll
    private let epollFD: Int32
    private let handles = Mutex<[UInt64: SocketHandle]>([:])
    private let nextID = Atomic<UInt64>(1)

    private init(epoll: Epoll, epollFD: Int32) {
        self.epoll = epoll
        self.epollFD = epollFD
    }

    /// Creates an epoll instance and starts the reactor's thread; `nil` (with `errno` set if epoll
    /// exists) when the C library has no epoll or `epoll_create1` fails.
    static func start() -> EpollReactor? {
        guard let epoll = Epoll() else { return nil }
        let fd = epoll.create()
        guard fd >= 0 else { return nil }
        let reactor = EpollReactor(epoll: epoll, epollFD: fd)
        PlatformShims.startDetachedThread { reactor.run() }
        return reactor
    }

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

    func deregister(_ handle: SocketHandle) {
        _ = self.handles.withLock { $0.removeValue(forKey: handle.id) }
        _ = self.epoll.control(self.epollFD, operation: Epoll.controlDelete, fd: handle.fd, events: 0, data: 0)
    }

    func watch(_ handle: SocketHandle, for direction: SocketHandle.Direction) {}

    private func run() -> Never {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * Epoll.eventStride, alignment: 8)
        var load = ReactorLoad()
        while true {
            load.waiting(at: Syscalls.monotonicNanoseconds())
            let count = self.epoll.wait(self.epollFD, into: buffer, timeoutMilliseconds: -1)
            load.woke(at: Syscalls.monotonicNanoseconds())
            let mayHandleReads = load.mayHandleReads(reports: Int(count))
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
                handle.signal(
                    readable: readable,
                    writable: writable,
                    mayHandleReads: mayHandleReads,
                    shortReadDrains: flags & (Epoll.error | Epoll.hangUp | Epoll.readHangUp) == 0
                )
            }
        }
    }
}
