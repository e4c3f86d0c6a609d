import CoatyMQTTPackets
import CoatySockets
import Synchronization

/// The bounded outbound queue of one client connection, drained by that connection's writer task.
///
/// The fan-out path enqueues synchronously and never waits for a slow client. Policy:
/// - a QoS 0 PUBLISH is dropped (and counted) when ``capacity`` packets are already waiting, or when
///   its topic and payload would take the PUBLISHes waiting beyond ``byteCapacity`` bytes (one is
///   always accepted into an empty queue);
/// - any other packet is always queued, but if the queue then holds more than ``hardLimit`` packets the
///   client is not reading at all and the connection is closed as a slow consumer.
/// QoS 1/2 traffic is additionally bounded upstream by the session's in-flight window.
final class Outbox: Sendable {
    /// One queued packet.
    enum Item: Sendable {
        case packet(MQTTPacket)
        case publish(BrokerMessage, packetID: UInt16?, dup: Bool)

        /// The topic and payload bytes of a PUBLISH, 0 for other packets.
        var publishedSize: Int {
            guard case .publish(let message, _, _) = self else { return 0 }
            return message.queuedSize
        }
    }

    /// What ``enqueue(_:droppable:)`` did.
    enum EnqueueResult: Sendable, Equatable {
        case queued
        /// Queued, but the queue is at least half full: the producer should yield to the writer.
        case queuedCongested
        case dropped
        case overflow
    }

    private struct State: Sendable {
        var items: [Item] = []
        /// The topic and payload bytes of the queued PUBLISHes.
        var publishedBytes = 0
        var waiter: CheckedContinuation<[Item]?, Never>?
        var isFinished = false
        var droppedCount = 0
        /// Batches handed to the writer: the client's reading progress.
        var batchesTaken: UInt64 = 0

        /// Whether at least half of either bound is taken.
        func isHalfFull(capacity: Int, byteCapacity: Int) -> Bool {
            self.items.count * 2 >= capacity || self.publishedBytes * 2 >= byteCapacity
        }

        /// Takes every queued item, as one batch for the writer.
        mutating func takeAll() -> [Item] {
            defer {
                self.items = []
                self.publishedBytes = 0
                self.batchesTaken &+= 1
            }
            return self.items
        }
    }

    /// Queued packets beyond which QoS 0 publishes are dropped.
    let capacity: Int
    /// Queued packets beyond which the connection is closed.
    let hardLimit: Int
    /// Bytes of queued PUBLISHes (topics and payloads) beyond which QoS 0 PUBLISHes are dropped.
    let byteCapacity: Int
    /// The socket this outbox feeds; closed by ``abort()``. `nil` for a connection without one (tests,
    /// the fuzz harness).
    let socket: (any ByteStreamConnection)?
    private let state = Mutex(State())

    init(socket: (any ByteStreamConnection)?, capacity: Int, hardLimit: Int, byteCapacity: Int) {
        self.socket = socket
        self.capacity = max(1, capacity)
        self.hardLimit = max(self.capacity, hardLimit)
        self.byteCapacity = max(1, byteCapacity)
    }

    /// Creates the outbox of a client connection with the broker's limits: ``capacity`` and
    /// ``byteCapacity`` are the queue bounds, ``hardLimit`` is 2 × (the queue bound + the in-flight
    /// window) + 16 packets.
    convenience init(socket: (any ByteStreamConnection)?, configuration: MQTTBroker.Configuration) {
        self.init(
            socket: socket,
            capacity: configuration.maximumQueuedMessagesPerClient,
            hardLimit: 2 * configuration.maximumQueuedMessagesPerClient
                + 2 * configuration.maximumInFlightMessagesPerClient + 16,
            byteCapacity: configuration.maximumQueuedBytesPerClient
        )
    }

    /// Queues a packet for the writer without suspending.
    func enqueue(_ item: Item, droppable: Bool) -> EnqueueResult {
        let (result, wake): (EnqueueResult, (CheckedContinuation<[Item]?, Never>, [Item])?) = self.state.withLock {
            state in
            if state.isFinished { return (.dropped, nil) }
            let size = item.publishedSize
            if droppable,
                state.items.count >= self.capacity
                    || (state.publishedBytes + size > self.byteCapacity && !state.items.isEmpty)
            {
                state.droppedCount += 1
                return (.dropped, nil)
            }
            if state.items.count >= self.hardLimit { return (.overflow, nil) }
            state.items.append(item)
            state.publishedBytes += size
            if let waiter = state.waiter {
                state.waiter = nil
                return (.queued, (waiter, state.takeAll()))
            }
            return (
                state.isHalfFull(capacity: self.capacity, byteCapacity: self.byteCapacity) ? .queuedCongested : .queued,
                nil
            )
        }
        if let (waiter, items) = wake { waiter.resume(returning: items) }
        return result
    }

    /// Waits for queued packets and takes them all, or returns `nil` once finished and drained.
    ///
    /// Suspends while the queue is empty. Cancellation finishes the outbox and returns `nil`.
    func next() async -> [Item]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Item]?, Never>) in
                let immediate: [Item]?? = self.state.withLock { state in
                    if !state.items.isEmpty { return .some(state.takeAll()) }
                    if state.isFinished { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            self.finish()
        }
    }

    /// Lets the writer drain what is queued and then end; later enqueues are dropped.
    func finish() {
        let waiter = self.state.withLock { state -> CheckedContinuation<[Item]?, Never>? in
            state.isFinished = true
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Drops everything queued, ends the writer and closes the socket.
    func abort() {
        self.state.withLock { state in
            state.items = []
            state.publishedBytes = 0
        }
        self.finish()
        self.socket?.close()
    }

    /// Whether the queue is still at least half full, and how many batches the writer has taken so far.
    var backlog: (isCongested: Bool, batchesTaken: UInt64) {
        self.state.withLock {
            ($0.isHalfFull(capacity: self.capacity, byteCapacity: self.byteCapacity), $0.batchesTaken)
        }
    }

    /// Takes every queued item without waiting, as the writer takes a batch: for tests and the fuzz
    /// harness, which drain an outbox that has no writer task.
    func takeQueued() -> [Item] {
        self.state.withLock { $0.takeAll() }
    }

    /// Whether ``finish()`` or ``abort()`` was called, after which enqueued packets are dropped.
    var isFinished: Bool { self.state.withLock { $0.isFinished } }

    /// The number of packets waiting for the writer.
    var depth: Int { self.state.withLock { $0.items.count } }

    /// QoS 0 publishes dropped because the queue was full.
    var droppedCount: Int { self.state.withLock { $0.droppedCount } }
}
