import CoatyMQTTPackets
import CoatySockets
import Synchronization

/// The bounded outbound queue of one client connection, drained by that connection's writer task.
///
/// It counts the client's **unread bytes**: the encoded size of the packets queued plus those of the
/// batch the writer is still writing. The fan-out path enqueues synchronously and never waits for a
/// slow client. Policy:
/// - a QoS 0 PUBLISH is dropped (and counted) when ``capacity`` packets are already waiting, when
///   its topic and payload would take the PUBLISHes waiting beyond ``byteCapacity`` bytes (one is
///   always accepted into an empty queue), or when it would take the unread bytes beyond
///   ``unreadLimit``;
/// - any other packet is queued unless it would take the unread bytes beyond ``unreadLimit``: then the
///   client is a slow consumer and the connection is closed (a packet into an empty outbox is always
///   accepted, so a packet up to the maximum size gets through to a client that reads);
/// - the client's own reader pauses (``waitForRoom()``) while ``needsRoom`` holds, so a client that
///   pipelines requests gets its replies at the pace it reads them and never overflows.
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

        /// The bytes the item takes on the wire.
        var encodedSize: Int {
            switch self {
            case .publish(let message, let packetID, _):
                let remaining = 2 + message.queuedSize + (packetID == nil ? 0 : 2)
                return 1 + MQTTRemainingLength.byteCount(for: remaining) + remaining
            case .packet(.suback(let suback)):
                return 4 + suback.returnCodes.count
            case .packet(.pingresp), .packet(.pingreq), .packet(.disconnect):
                return 2
            case .packet:
                return 4
            }
        }
    }

    /// What ``enqueue(_:droppable:)`` did.
    enum EnqueueResult: Sendable, Equatable {
        case queued
        /// Queued, but the queue is at least half full: the producer should yield to the writer.
        case queuedCongested
        case dropped
        /// Not queued: the client's unread bytes would exceed ``unreadLimit``.
        case overflow
    }

    private struct State: Sendable {
        var items: [Item] = []
        /// The topic and payload bytes of the queued PUBLISHes.
        var publishedBytes = 0
        /// The encoded bytes of the queued items.
        var queuedBytes = 0
        /// The encoded bytes of the batch the writer took and has not finished writing.
        var writingBytes = 0
        var waiter: CheckedContinuation<[Item]?, Never>?
        /// The reader, waiting in ``waitForRoom()``.
        var roomWaiter: CheckedContinuation<Bool, Never>?
        var isFinished = false
        var droppedCount = 0
        /// Batches handed to the writer: the client's reading progress.
        var batchesTaken: UInt64 = 0
        /// Why ``abort(reason:)`` closed the connection, if it gave one.
        var abortReason: String?

        var unreadBytes: Int { self.queuedBytes + self.writingBytes }

        /// Whether at least half of either bound is taken.
        func isHalfFull(capacity: Int, byteCapacity: Int) -> Bool {
            self.items.count * 2 >= capacity || self.publishedBytes * 2 >= byteCapacity
        }

        /// Takes every queued item, as one batch for the writer.
        mutating func takeAll() -> [Item] {
            defer {
                self.items = []
                self.publishedBytes = 0
                self.writingBytes += self.queuedBytes
                self.queuedBytes = 0
                self.batchesTaken &+= 1
            }
            return self.items
        }
    }

    /// Queued packets beyond which QoS 0 publishes are dropped.
    let capacity: Int
    /// Bytes of queued PUBLISHes (topics and payloads) beyond which QoS 0 PUBLISHes are dropped.
    let byteCapacity: Int
    /// Unread bytes beyond which the connection is closed as a slow consumer.
    let unreadLimit: Int
    /// Unread bytes from which the client's reader waits for the writer: the smaller of
    /// ``unreadLimit`` / 2 and 1 MiB.
    let pauseBytes: Int
    /// Queued packets from which the client's reader waits for the writer, whatever their bytes.
    static let pauseItems = 4096
    /// The socket this outbox feeds; closed by ``abort(reason:)``. `nil` for a connection without one
    /// (tests, the fuzz harness).
    let socket: (any ByteStreamConnection)?
    private let state = Mutex(State())

    init(socket: (any ByteStreamConnection)?, capacity: Int, byteCapacity: Int, unreadLimit: Int) {
        self.socket = socket
        self.capacity = max(1, capacity)
        self.byteCapacity = max(1, byteCapacity)
        self.unreadLimit = max(1, unreadLimit)
        self.pauseBytes = max(1, min(self.unreadLimit / 2, 1 << 20))
    }

    /// Creates the outbox of a client connection with the broker's limits.
    convenience init(socket: (any ByteStreamConnection)?, configuration: MQTTBroker.Configuration) {
        self.init(
            socket: socket,
            capacity: configuration.maximumQueuedMessagesPerClient,
            byteCapacity: configuration.maximumQueuedBytesPerClient,
            unreadLimit: configuration.maximumUnreadBytesPerClient
        )
    }

    /// Queues a packet for the writer without suspending.
    func enqueue(_ item: Item, droppable: Bool) -> EnqueueResult {
        let (result, wake): (EnqueueResult, (CheckedContinuation<[Item]?, Never>, [Item])?) = self.state.withLock {
            state in
            if state.isFinished { return (.dropped, nil) }
            let size = item.publishedSize
            let encodedSize = item.encodedSize
            let exceedsUnread = state.unreadBytes > 0 && state.unreadBytes + encodedSize > self.unreadLimit
            if droppable,
                state.items.count >= self.capacity
                    || (state.publishedBytes + size > self.byteCapacity && !state.items.isEmpty) || exceedsUnread
            {
                state.droppedCount += 1
                return (.dropped, nil)
            }
            if exceedsUnread { return (.overflow, nil) }
            state.items.append(item)
            state.publishedBytes += size
            state.queuedBytes += encodedSize
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
    /// Suspends while the queue is empty. The writer calls ``wrote()`` once it has written the batch.
    ///
    /// It does not watch for cancellation: the connection's reader finishes or aborts the outbox
    /// whenever it ends, also when cancelled, and that wakes the writer. A cancellation handler here
    /// took each connection's writer task past its first allocator slab: 1 KiB more per connection.
    func next() async -> [Item]? {
        await withCheckedContinuation { (continuation: CheckedContinuation<[Item]?, Never>) in
            let immediate: [Item]?? = self.state.withLock { state in
                if !state.items.isEmpty { return .some(state.takeAll()) }
                if state.isFinished { return .some(nil) }
                state.waiter = continuation
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }

    /// Records that the writer handed the last batch to the socket, and wakes a reader waiting for
    /// room if there is room now.
    ///
    /// - Returns: Whether the reader was waiting for room (the client read while its reader paused).
    @discardableResult
    func wrote() -> Bool {
        let (wasWaiting, wake) = self.state.withLock { state -> (Bool, CheckedContinuation<Bool, Never>?) in
            state.writingBytes = 0
            guard let waiter = state.roomWaiter else { return (false, nil) }
            if self.needsRoom(state) { return (true, nil) }
            state.roomWaiter = nil
            return (true, waiter)
        }
        wake?.resume(returning: true)
        return wasWaiting
    }

    /// Whether the client's reader should wait for the writer before handling more of its packets.
    var needsRoom: Bool { self.state.withLock { self.needsRoom($0) } }

    private func needsRoom(_ state: State) -> Bool {
        state.unreadBytes >= self.pauseBytes || state.items.count >= Self.pauseItems
    }

    /// Suspends the client's reader until the writer has made room (see ``needsRoom``).
    ///
    /// - Returns: `true` when there is room, `false` once the outbox is finished or aborted (the
    ///   connection is closing) or the task is cancelled.
    func waitForRoom() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate: Bool? = self.state.withLock { state in
                    if state.isFinished { return false }
                    if !self.needsRoom(state) { return true }
                    state.roomWaiter = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            self.finish()
        }
    }

    /// Lets the writer drain what is queued and then end; later enqueues are dropped. A reader waiting
    /// for room is woken.
    func finish() {
        let (waiter, roomWaiter) = self.state.withLock { state in
            state.isFinished = true
            defer {
                state.waiter = nil
                state.roomWaiter = nil
            }
            return (state.waiter, state.roomWaiter)
        }
        waiter?.resume(returning: nil)
        roomWaiter?.resume(returning: false)
    }

    /// Drops everything queued, ends the writer and closes the socket.
    ///
    /// - Parameter reason: Why, for the connection's close reason (``abortReason``).
    func abort(reason: String? = nil) {
        self.state.withLock { state in
            state.items = []
            state.publishedBytes = 0
            state.queuedBytes = 0
            if state.abortReason == nil { state.abortReason = reason }
        }
        self.finish()
        self.socket?.close()
    }

    /// Why ``abort(reason:)`` closed the connection, if it said.
    var abortReason: String? { self.state.withLock { $0.abortReason } }

    /// Whether the queue is still at least half full, and how many batches the writer has taken so far.
    var backlog: (isCongested: Bool, batchesTaken: UInt64) {
        self.state.withLock {
            ($0.isHalfFull(capacity: self.capacity, byteCapacity: self.byteCapacity), $0.batchesTaken)
        }
    }

    /// Takes every queued item and counts it written, as the writer does with a batch: for tests and the
    /// fuzz harness, which drain an outbox that has no writer task.
    func takeQueued() -> [Item] {
        defer { self.wrote() }
        return self.state.withLock { $0.takeAll() }
    }

    /// Whether ``finish()`` or ``abort(reason:)`` was called, after which enqueued packets are dropped.
    var isFinished: Bool { self.state.withLock { $0.isFinished } }

    /// The number of packets waiting for the writer.
    var depth: Int { self.state.withLock { $0.items.count } }

    /// The bytes queued to the client that the writer has not yet handed to the socket.
    var unreadBytes: Int { self.state.withLock { $0.unreadBytes } }

    /// QoS 0 publishes dropped because the queue was full.
    var droppedCount: Int { self.state.withLock { $0.droppedCount } }
}
