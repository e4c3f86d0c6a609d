import CoatySockets
import Synchronization

/// The connections that wait with no task of their own, and the queue that hands each one, once
/// woken, to a task of the broker's ``MQTTBroker/run()``.
///
/// An idle connection needs no task: while a client sends nothing that the reactor's thread cannot
/// handle itself (see ``ClientConnection``), its reader state, outbox and watch wait behind a parked
/// socket (`TCPConnection.park(since:handlingUpTo:reader:)`). A task, with its async frames and a
/// writer beside it, is started only when the client sends something that needs one (a large read,
/// a packet that must wait), when its outbox needs a writer, or when it closes. That keeps an idle
/// connection at the size of its objects, as in mosquitto's event loop, instead of a task's memory
/// as well.
///
/// Once ``stop()`` was called nothing more parks, the parked connections are closed (each wakes and
/// ends in a task of its own), and ``next()`` returns `nil` when none is left.
final class ParkedConnections: Sendable {
    /// A parked connection that woke, and what woke it (see `TCPConnection.park`).
    struct Woken: Sendable {
        /// The connection's reader state, which holds the connection, its outbox and its watch.
        let state: ClientConnection.ReaderState
        let wake: Result<DirectReadOutcome, any Error>?

        var connection: ClientConnection { self.state.connection }
    }

    // Unsafe continuations, as in ``Outbox``: each is taken from its slot under the lock and resumed once.
    private struct State {
        var sockets: [ConnectionID: TCPConnection] = [:]
        var woken: [Woken] = []
        /// The broker's task, waiting in ``next()``.
        var consumer: UnsafeContinuation<[Woken]?, Never>?
        var isStopping = false
        /// A wait for a number of parked connections (``waitUntil(count:)``).
        var countWaiter: (count: Int, continuation: UnsafeContinuation<Void, Never>)?

        /// Takes the count waiter if its count is reached.
        mutating func reachedCount() -> UnsafeContinuation<Void, Never>? {
            guard let waiter = self.countWaiter, waiter.count == self.sockets.count else { return nil }
            self.countWaiter = nil
            return waiter.continuation
        }

        mutating func takeWoken() -> [Woken] {
            defer { self.woken = [] }
            return self.woken
        }

        /// Whether ``next()`` is done: stopping, with nothing parked or woken left.
        var isDone: Bool { self.isStopping && self.sockets.isEmpty && self.woken.isEmpty }
    }

    private let state = Mutex(State())

    /// The number of parked connections.
    var count: Int { self.state.withLock { $0.sockets.count } }

    /// Whether ``stop()`` was called: read without the lock on every read of a connection that may
    /// park; ``enter(_:socket:)`` decides under the lock.
    var isStopping: Bool { self.stopping.load(ordering: .relaxed) }
    private let stopping = Atomic(false)

    /// Counts a connection about to park.
    ///
    /// - Returns: `false` once stopping: the connection must not park.
    func enter(_ id: ConnectionID, socket: TCPConnection) -> Bool {
        let (entered, reached) = self.state.withLock { state in
            guard !state.isStopping else { return (false, nil as UnsafeContinuation<Void, Never>?) }
            state.sockets[id] = socket
            return (true, state.reachedCount())
        }
        reached?.resume()
        return entered
    }

    /// Waits until `count` connections are parked (or about to park): for tests.
    ///
    /// Returns early when the task is cancelled, so that a test's time limit ends a wait for a count
    /// that never comes instead of leaving the test run hanging.
    func waitUntil(count: Int) async {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                let reached = self.state.withLock { state -> UnsafeContinuation<Void, Never>? in
                    // Checked under the lock the cancellation handler takes: one of the two resumes.
                    if Task.isCancelled { return continuation }
                    state.countWaiter = (count, continuation)
                    return state.reachedCount()
                }
                reached?.resume()
            }
        } onCancel: {
            let waiter = self.state.withLock { state in
                defer { state.countWaiter = nil }
                return state.countWaiter?.continuation
            }
            waiter?.resume()
        }
    }

    /// Uncounts a connection that entered but did not park after all.
    func leave(_ id: ConnectionID) {
        let (consumer, reached) = self.state.withLock { state in
            state.sockets.removeValue(forKey: id)
            let reached = state.reachedCount()
            guard state.isDone else { return (nil as UnsafeContinuation<[Woken]?, Never>?, reached) }
            defer { state.consumer = nil }
            return (state.consumer, reached)
        }
        consumer?.resume(returning: nil)
        reached?.resume()
    }

    /// Hands a woken connection to the broker's task.
    func wake(_ woken: Woken) {
        let (resumption, reached) = self.state.withLock { state in
            state.sockets.removeValue(forKey: woken.connection.id)
            let reached = state.reachedCount()
            guard let consumer = state.consumer else {
                state.woken.append(woken)
                return (nil as (UnsafeContinuation<[Woken]?, Never>, [Woken])?, reached)
            }
            state.consumer = nil
            return ((consumer, [woken]), reached)
        }
        if let (consumer, batch) = resumption { consumer.resume(returning: batch) }
        reached?.resume()
    }

    /// Waits for woken connections and takes them all; `nil` once stopped with none left.
    ///
    /// Not cancellable: after ``stop()`` the broker's task still serves every connection that wakes,
    /// so that each is cleaned up (its will published, its session detached).
    func next() async -> [Woken]? {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<[Woken]?, Never>) in
            let immediate: [Woken]?? = self.state.withLock { state in
                if !state.woken.isEmpty { return state.takeWoken() }
                if state.isDone { return .some(nil) }
                state.consumer = continuation
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }

    /// Lets nothing park any more and closes the parked connections, each of which then wakes;
    /// ``next()`` returns `nil` once none is left.
    func stop() {
        let (sockets, consumer) = self.state.withLock { state in
            state.isStopping = true
            self.stopping.store(true, ordering: .relaxed)
            let consumer = state.isDone ? state.consumer : nil
            if consumer != nil { state.consumer = nil }
            return (Array(state.sockets.values), consumer)
        }
        consumer?.resume(returning: nil)
        for socket in sockets { socket.close() }
    }
}
