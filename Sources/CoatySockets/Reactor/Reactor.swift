/// The event loop that tells waiting socket operations when their descriptor is ready.
///
/// ## Why a thread
///
/// Swift concurrency has no portable way to wait for file-descriptor readiness. A reactor therefore
/// owns one dedicated POSIX thread, started when the reactor is created and kept for the life of the
/// process. It blocks in the kernel (`epoll_wait` or `poll`) and, when a socket becomes readable or
/// writable, resumes the continuation of the task waiting on it
/// (``SocketHandle/signal(readable:writable:mayHandleReads:shortReadDrains:)``). The I/O itself
/// (`recv`, `send`, `accept`) runs on the awaiting task, with one exception: a task waiting with
/// `TCPConnection.read(maxBytes:handlingUpTo:_:)` lets this thread read and handle small messages in
/// its place while they arrive one at a time (the broker's readers), saving a hand-over per message.
///
/// ## Two backends
///
/// - ``EpollReactor`` (Linux, the default there): sockets are registered edge-triggered for input and
///   output once, at creation, so a wait costs no system call.
/// - ``PollReactor`` (POSIX `poll(2)`: Darwin, and Linux on request): a wait arms the descriptor's
///   direction (``watch(_:for:)``) and wakes the thread so that its next `poll` includes it.
///
/// Either way a readiness report is never lost: each handle counts the reports it has seen, and an
/// operation that got `EAGAIN` only suspends if none arrived since it tried. ``SharedReactor`` picks
/// the backend once per process.
protocol Reactor: AnyObject, Sendable {
    /// Creates a handle for a non-blocking descriptor and registers it.
    ///
    /// - Throws: ``SocketError`` if the kernel refuses the descriptor.
    func register(fd: Int32) throws(SocketError) -> SocketHandle

    /// Forgets a handle; called once, before its descriptor is closed.
    func deregister(_ handle: SocketHandle)

    /// Asks for one readiness report in `direction`: called after a waiter for that direction is
    /// installed on `handle`. Cheap and idempotent; the epoll backend, which always reports both
    /// directions, does nothing.
    func watch(_ handle: SocketHandle, for direction: SocketHandle.Direction)
}
