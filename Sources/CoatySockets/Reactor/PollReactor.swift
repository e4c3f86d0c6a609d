import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The POSIX `poll(2)` event loop: the ``Reactor`` on Darwin, and on Linux with `COATY_REACTOR=poll`.
///
/// `poll` is level-triggered and keeps no registrations, so this reactor polls only what someone waits
/// for. A waiting operation arms its direction of its descriptor (``watch(_:for:)``); the thread polls
/// every armed descriptor plus its ``WakeChannel``; a report disarms the directions it covers and
/// signals the handle, and a waiter that still gets `EAGAIN` arms again. A descriptor nobody waits on
/// is not polled, so a peer's hang-up that nobody reads cannot make `poll` return over and over.
///
/// Arming wakes the thread so that its next `poll` includes the new interest, at most once per round:
/// the first ``watch(_:for:)`` after the thread built its descriptor set writes to the wake channel,
/// later ones see that a wake is pending. Deregistering an armed handle wakes it too: while `poll`
/// runs, the kernel holds a reference to every file in its set, so a socket closed under it would
/// stay open (no FIN, no reset to the peer) until some other descriptor became ready. Reports that
/// arrive for a deregistered handle are ignored, because reports are matched to handles by their
/// unique id, never by the descriptor number, which a new socket may already reuse.
final class PollReactor: Reactor {
    /// A descriptor's armed directions, as `poll` events.
    private struct Interest {
        var handle: SocketHandle
        var events: Int16
    }

    private struct State {
        /// The armed handles by id.
        var armed: [UInt64: Interest] = [:]
        /// Whether a wake has been written since the thread last built its descriptor set.
        var isWakePending = false
    }

    private let wakeChannel: WakeChannel
    private let state = Mutex(State())
    private let nextID = Atomic<UInt64>(1)
    /// How many times `poll` has returned: lets tests check that the thread does not spin.
    private let rounds = Atomic<Int>(0)

    private init(wakeChannel: WakeChannel) {
        self.wakeChannel = wakeChannel
    }

    /// Creates a reactor and starts its thread; `nil` (with `errno`) if the wake channel cannot be made.
    static func start() -> PollReactor? {
        guard let wakeChannel = WakeChannel() else { return nil }
        let reactor = PollReactor(wakeChannel: wakeChannel)
        PlatformShims.startDetachedThread { reactor.run() }
        return reactor
    }

    /// How many times the thread's `poll` has returned so far.
    var completedRounds: Int {
        self.rounds.load(ordering: .relaxed)
    }

    func register(fd: Int32) throws(SocketError) -> SocketHandle {
        SocketHandle(fd: fd, id: self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue, reactor: self)
    }

    func deregister(_ handle: SocketHandle) {
        // Only an armed handle can be in the set the thread is polling; it must leave that set
        // before the descriptor's close can take effect.
        let needsWake = self.state.withLock { state in
            guard state.armed.removeValue(forKey: handle.id) != nil, !state.isWakePending else { return false }
            state.isWakePending = true
            return true
        }
        if needsWake { self.wakeChannel.wake() }
    }

    func watch(_ handle: SocketHandle, for direction: SocketHandle.Direction) {
        let event = direction == .read ? Int16(POLLIN) : Int16(POLLOUT)
        let needsWake = self.state.withLock { state in
            if let interest = state.armed[handle.id] {
                if interest.events & event != 0 { return false }
                state.armed[handle.id]?.events |= event
            } else {
                state.armed[handle.id] = Interest(handle: handle, events: event)
            }
            guard !state.isWakePending else { return false }
            state.isWakePending = true
            return true
        }
        if needsWake { self.wakeChannel.wake() }
    }

    private func run() -> Never {
        // Slot 0 is the wake channel; slot i > 0 polls the handle with id ids[i].
        var descriptors: [pollfd] = []
        var ids: [UInt64] = []
        var reports: [(handle: SocketHandle, readable: Bool, writable: Bool)] = []
        var load = ReactorLoad()
        while true {
            self.state.withLock { state in
                Self.collectReports(from: descriptors, ids: ids, disarming: &state.armed, into: &reports)
                state.isWakePending = false
                descriptors.removeAll(keepingCapacity: true)
                ids.removeAll(keepingCapacity: true)
                descriptors.append(pollfd(fd: self.wakeChannel.readFD, events: Int16(POLLIN), revents: 0))
                ids.append(0)
                for (id, interest) in state.armed {
                    descriptors.append(pollfd(fd: interest.handle.fd, events: interest.events, revents: 0))
                    ids.append(id)
                }
            }
            let mayHandleReads = load.mayHandleReads(reports: reports.count)
            for report in reports {
                report.handle.signal(
                    readable: report.readable,
                    writable: report.writable,
                    mayHandleReads: mayHandleReads
                )
            }
            reports.removeAll(keepingCapacity: true)
            load.waiting(at: Syscalls.monotonicNanoseconds())
            let count = descriptors.withUnsafeMutableBufferPointer { buffer in
                poll(buffer.baseAddress, nfds_t(buffer.count), -1)
            }
            load.woke(at: Syscalls.monotonicNanoseconds())
            self.rounds.add(1, ordering: .relaxed)
            if count < 0 {
                guard errno == EINTR else { preconditionFailure("CoatySockets: poll failed with errno \(errno)") }
                for index in descriptors.indices { descriptors[index].revents = 0 }
                continue
            }
            if descriptors[0].revents != 0 { self.wakeChannel.drain() }
        }
    }

    /// Turns the `revents` of one round into reports, disarming the directions they cover.
    ///
    /// An error, hang-up or invalid descriptor counts as both directions, as with epoll: the waiter's
    /// next system call reports what happened. Reports for handles no longer armed (deregistered, or
    /// disarmed because the handle was closed) are dropped.
    private static func collectReports(
        from descriptors: [pollfd],
        ids: [UInt64],
        disarming armed: inout [UInt64: Interest],
        into reports: inout [(handle: SocketHandle, readable: Bool, writable: Bool)]
    ) {
        let failure = Int16(POLLERR) | Int16(POLLHUP) | Int16(POLLNVAL)
        for index in descriptors.indices.dropFirst() where descriptors[index].revents != 0 {
            let id = ids[index]
            guard var interest = armed[id] else { continue }
            let events = descriptors[index].revents
            let failed = events & failure != 0
            let readable = failed || events & Int16(POLLIN) != 0
            let writable = failed || events & Int16(POLLOUT) != 0
            if readable { interest.events &= ~Int16(POLLIN) }
            if writable { interest.events &= ~Int16(POLLOUT) }
            armed[id] = interest.events == 0 ? nil : interest
            reports.append((interest.handle, readable, writable))
        }
    }
}
