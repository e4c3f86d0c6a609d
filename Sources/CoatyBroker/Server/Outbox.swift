import CoatyCore
import CoatyMQTTPackets
import CoatySockets
import Synchronization

/// The bounded outbound queue of one client connection, drained by that connection's writer task, or
/// directly by a reader that routed packets to it while the writer was idle (see ``OutboxState``).
///
/// It counts the client's **unread bytes**: the encoded size of the packets queued plus those of the
/// batch still being written. The fan-out path enqueues synchronously and never waits for a
/// slow client. Policy:
/// - a QoS 0 PUBLISH is dropped (and counted) when ``OutboxState/capacity`` packets are already
///   waiting, when its topic and payload would take the PUBLISHes waiting beyond
///   ``OutboxState/byteCapacity`` bytes (one is always accepted into an empty queue), or when it would
///   take the unread bytes beyond ``unreadLimit``;
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

    // Unsafe continuations: each is taken out of its slot under the lock before it is resumed, so it
    // is resumed exactly once; a checked one is a type of unknown layout, which puts runtime
    // value-witness calls on every copy of this state, on every message's path.
    private struct Locked {
        var state: OutboxState
        /// The writer task waiting in ``next()``, or the connection parked without one.
        var writer = WriterSlot.none
        /// The reader, waiting in ``waitForRoom()``.
        var reader: UnsafeContinuation<Bool, Never>?
        /// Set by a ``park(wakingReader:)`` refused while the writer was busy: called once the writer
        /// waits again, so that the reader tries again.
        var parkRetry: (@Sendable () -> Void)?
    }

    /// Who gets what wakes the writer.
    private enum WriterSlot {
        /// No writer task waits: it is writing, or not yet asking.
        case none
        /// The writer task waits in ``next()``.
        case waiting(UnsafeContinuation<[Item]?, Never>)
        /// The connection is parked with no tasks (see ``park(wakingReader:)``): what would wake the
        /// writer is kept for the next writer task, and `wake` (once) has the reader start one.
        case parked(wake: (@Sendable () -> Void)?, batch: [Item]??)

        /// Hands a batch (`nil`: the end) to the writer; returns what to do once the lock is released.
        mutating func deliver(_ batch: [Item]?) -> WriterDelivery? {
            switch self {
            case .none:
                return nil
            case .waiting(let continuation):
                self = .none
                return .resume(continuation, batch)
            case .parked(let wake, _):
                self = .parked(wake: nil, batch: .some(batch))
                return wake.map { .wakeReader($0) }
            }
        }
    }

    /// What a delivery to the writer does after the lock.
    private enum WriterDelivery {
        case resume(UnsafeContinuation<[Item]?, Never>, [Item]?)
        case wakeReader(@Sendable () -> Void)

        func perform() {
            switch self {
            case .resume(let continuation, let batch): continuation.resume(returning: batch)
            case .wakeReader(let wake): wake()
            }
        }
    }

    /// Unread bytes beyond which the connection is closed as a slow consumer.
    let unreadLimit: Int
    /// The socket this outbox feeds; closed by ``abort(reason:)``. `nil` for a connection without one
    /// (tests, the fuzz harness).
    let socket: (any ByteStreamConnection)?
    /// The socket when a reader may write to it directly (see ``OutboxState``): TCP or TLS. WebSocket
    /// connections frame what they write in their writer task, so that task writes everything.
    let directSocket: (any DirectByteStream)?
    /// Whether ``directSocket`` encrypts what it sends (see ``DirectWrites/includesEncrypting``).
    private let encrypts: Bool
    /// The connection's activity watch, touched when the client reads while its reader waits for room.
    private let watch: ActivityWatch?
    private let locked: Mutex<Locked>

    /// Creates the outbox of a client connection with the broker's limits (shared by its outboxes).
    init(socket: (any ByteStreamConnection)?, watch: ActivityWatch? = nil, limits: OutboxState.Limits) {
        self.socket = socket
        self.directSocket = socket as? any DirectByteStream
        self.encrypts = self.directSocket != nil && !(socket is TCPConnection)
        self.watch = watch
        self.unreadLimit = limits.unreadLimit
        self.locked = Mutex(Locked(state: OutboxState(limits: limits)))
    }

    convenience init(
        socket: (any ByteStreamConnection)?,
        watch: ActivityWatch? = nil,
        capacity: Int,
        byteCapacity: Int,
        unreadLimit: Int
    ) {
        self.init(
            socket: socket,
            watch: watch,
            limits: OutboxState.Limits(capacity: capacity, byteCapacity: byteCapacity, unreadLimit: unreadLimit)
        )
    }

    /// Queues a packet without suspending, waking the writer task if it waits.
    func enqueue(_ item: Item, droppable: Bool) -> EnqueueResult {
        self.enqueue(item, droppable: droppable, mayClaim: false).result
    }

    /// Queues a packet without suspending. Given `directWrites`, and if the writer task waits with
    /// nothing unwritten and the socket is TCP or TLS, claims the outbox instead of waking the writer,
    /// and adds it to `directWrites`, whose owner writes it at the end of its read (see
    /// ``OutboxState``). Without, wakes the writer as ``enqueue(_:droppable:)`` does.
    func enqueue(_ item: Item, droppable: Bool, directWrites: inout DirectWrites?) -> EnqueueResult {
        let mayClaim = self.directSocket != nil && directWrites?.admits(encrypting: self.encrypts) == true
        let (result, claimed) = self.enqueue(item, droppable: droppable, mayClaim: mayClaim)
        if claimed { directWrites?.add(self) }
        return result
    }

    private func enqueue(_ item: Item, droppable: Bool, mayClaim: Bool) -> (result: EnqueueResult, claimed: Bool) {
        let (result, claimed, delivery) = self.locked.withLock { locked in
            let (result, claimed, items) = locked.state.enqueue(item, droppable: droppable, mayClaim: mayClaim)
            guard let items else { return (result, claimed, nil as WriterDelivery?) }
            return (result, claimed, locked.writer.deliver(items))
        }
        delivery?.perform()
        return (result, claimed)
    }

    /// Sends what is queued in a claimed outbox with one `send` that does not wait, then hands the
    /// writer task what the socket did not take and what was queued meanwhile (see ``OutboxState``).
    ///
    /// Called by the reader that claimed the outbox, once, at the end of handling a read's packets.
    /// Counts what it sent in `traffic`; a batch the writer task finishes is counted by the writer.
    func writeDirectly(traffic: BrokerTraffic, logger: CoatyLogger) {
        let start = self.locked.withLock { $0.state.beginDirectWrite() }
        switch start {
        case .skip(let wake):
            self.wake(self.locked.withLock { Self.take(OutboxState.WriteEnd(wakeWriter: wake), from: &$0) })
        case .write(let items):
            var buffer: [UInt8] = []
            let messages = Self.encode(items, into: &buffer, logger: logger)
            // Over TLS what is left is encrypted, so the count is approximate when a write is split.
            let unsent = self.directSocket?.sendWithoutWaiting(buffer) ?? buffer
            traffic.sent(bytes: max(0, buffer.count - unsent.count), messages: unsent.isEmpty ? messages : 0)
            self.wake(
                self.locked.withLock {
                    Self.take($0.state.endDirectWrite(unsent: unsent, messages: messages), from: &$0)
                }
            )
        }
    }

    /// The continuations a finished write resumes, taken under the lock, and what to resume them with.
    private struct Wakes {
        var writer: WriterDelivery?
        var reader: UnsafeContinuation<Bool, Never>?
        var readerWasWaiting: Bool
    }

    private static func take(_ end: OutboxState.WriteEnd, from locked: inout Locked) -> Wakes {
        var wakes = Wakes(readerWasWaiting: end.readerWasWaiting)
        switch end.wakeWriter {
        case .items(let items): wakes.writer = locked.writer.deliver(items)
        case .unsent: wakes.writer = locked.writer.deliver([])
        case .end: wakes.writer = locked.writer.deliver(nil)
        case nil:
            // A direct write handed the socket back to the waiting writer: the reader may park now.
            if locked.state.writer == .waiting, let retry = locked.parkRetry {
                locked.parkRetry = nil
                wakes.writer = .wakeReader(retry)
            }
        }
        if end.wakeReader {
            wakes.reader = locked.reader
            locked.reader = nil
        }
        return wakes
    }

    /// Resumes what a finished write lets go on, and touches the watch if the reader waited for room.
    private func wake(_ wakes: Wakes) {
        wakes.writer?.perform()
        wakes.reader?.resume(returning: true)
        if wakes.readerWasWaiting { self.watch?.touch() }
    }

    /// Waits for queued packets and takes them all, or returns `nil` once finished and drained. An
    /// empty batch stands for the bytes a direct write left: take them with ``takeUnsent()``. (Not a
    /// payload of their own, so that the writer task's frames, which every idle connection keeps, do
    /// not grow; see `ClientConnection`'s note on frames.)
    ///
    /// Suspends while the queue is empty. The writer calls ``wrote()`` once it has written the batch.
    ///
    /// It does not watch for cancellation: the connection's reader finishes or aborts the outbox
    /// whenever it ends, also when cancelled, and that wakes the writer. A cancellation handler here
    /// took each connection's writer task past its first allocator slab: 1 KiB more per connection.
    func next() async -> [Item]? {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<[Item]?, Never>) in
            let (immediate, retry): ([Item]??, (@Sendable () -> Void)?) = self.locked.withLock { locked in
                if case .parked(_, let batch) = locked.writer {
                    // The first writer task after parking: it gets what came meanwhile, or it takes the
                    // place of the one that ended, in whatever state that left (waiting, or claimed).
                    locked.writer = .none
                    if let batch { return (batch, nil) }
                } else {
                    switch locked.state.next() {
                    case .write(let items): return (items, nil)
                    case .end: return (.some(nil), nil)
                    case .wait: break
                    }
                }
                locked.writer = .waiting(continuation)
                guard locked.state.writer == .waiting else { return (nil, nil) }
                defer { locked.parkRetry = nil }
                return (nil, locked.parkRetry)
            }
            if let immediate { continuation.resume(returning: immediate) }
            retry?()
        }
    }

    /// Ends the waiting writer task so that the connection can wait with no tasks of its own: only
    /// while the writer waits with nothing queued or unwritten. Until a writer task calls ``next()``
    /// again, what would wake the writer is kept for it, and `wakingReader` is called, once, so that
    /// the reader starts one. Refused while the writer is busy: `wakingReader` is then called when it
    /// waits again, for the reader to try again.
    ///
    /// - Returns: Whether the writer task was ended.
    func park(wakingReader: @escaping @Sendable () -> Void) -> Bool {
        let writer: UnsafeContinuation<[Item]?, Never>? = self.locked.withLock { locked in
            guard case .waiting(let writer) = locked.writer, locked.state.writer == .waiting else {
                if !locked.state.isFinished { locked.parkRetry = wakingReader }
                return nil
            }
            locked.writer = .parked(wake: wakingReader, batch: nil)
            return writer
        }
        writer?.resume(returning: nil)
        return writer != nil
    }

    /// The bytes a direct write left for the writer task (woken with an empty batch by ``next()``),
    /// and the PUBLISH packets to count once they are written.
    func takeUnsent() -> (bytes: [UInt8], messages: Int) {
        self.locked.withLock { $0.state.takeUnsent() }
    }

    /// Records that the writer handed the last batch to the socket, wakes a reader waiting for room
    /// if there is room now, and then touches the connection's watch: the client read while its
    /// reader paused.
    func wrote() {
        self.wake(self.locked.withLock { Self.take($0.state.wrote(), from: &$0) })
    }

    /// Whether the client's reader should wait for the writer before handling more of its packets.
    var needsRoom: Bool { self.locked.withLock { $0.state.needsRoom } }

    /// Suspends the client's reader until the writer has made room (see ``needsRoom``).
    ///
    /// - Returns: `true` when there is room, `false` once the outbox is finished or aborted (the
    ///   connection is closing) or the task is cancelled.
    func waitForRoom() async -> Bool {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Bool, Never>) in
                let immediate: Bool? = self.locked.withLock { locked in
                    let immediate = locked.state.waitForRoom()
                    if immediate == nil { locked.reader = continuation }
                    return immediate
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            self.finish()
        }
    }

    /// Lets the writer drain what is queued and then end; later enqueues are dropped. A reader waiting
    /// for room is woken. During a direct write, the direct writer ends the writer when it hands over.
    func finish() {
        let (writer, reader) = self.locked.withLock { locked in
            let (endWriter, wakeReader) = locked.state.finish()
            defer { if wakeReader { locked.reader = nil } }
            return (endWriter ? locked.writer.deliver(nil) : nil, wakeReader ? locked.reader : nil)
        }
        writer?.perform()
        reader?.resume(returning: false)
    }

    /// Drops everything queued, ends the writer and closes the socket.
    ///
    /// - Parameter reason: Why, for the connection's close reason (``abortReason``).
    func abort(reason: String? = nil) {
        self.locked.withLock { $0.state.abort(reason: reason) }
        self.finish()
        self.socket?.close()
    }

    /// Why ``abort(reason:)`` closed the connection, if it said.
    var abortReason: String? { self.locked.withLock { $0.state.abortReason } }

    /// Whether the queue is still at least half full, and how many batches the writer has taken so far.
    var backlog: (isCongested: Bool, batchesTaken: UInt64) {
        self.locked.withLock { ($0.state.isHalfFull, $0.state.batchesTaken) }
    }

    /// Takes every queued item and counts it written, as the writer does with a batch: for tests and the
    /// fuzz harness, which drain an outbox that has no writer task.
    func takeQueued() -> [Item] {
        defer { self.wrote() }
        return self.locked.withLock { $0.state.takeAll() }
    }

    /// Whether ``finish()`` or ``abort(reason:)`` was called, after which enqueued packets are dropped.
    var isFinished: Bool { self.locked.withLock { $0.state.isFinished } }

    /// The number of packets waiting for the writer.
    var depth: Int { self.locked.withLock { $0.state.items.count } }

    /// The bytes queued to the client that the writer has not yet handed to the socket.
    var unreadBytes: Int { self.locked.withLock { $0.state.unreadBytes } }

    /// QoS 0 publishes dropped because the queue was full.
    var droppedCount: Int { self.locked.withLock { $0.state.droppedCount } }

    /// Encodes a batch of items into `buffer`, replacing what it held.
    ///
    /// - Returns: The number of PUBLISH packets in the batch.
    @inline(never)
    @discardableResult
    static func encode(_ items: [Item], into buffer: inout [UInt8], logger: CoatyLogger) -> Int {
        buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
        // One allocation for a direct write's fresh buffer, not one per append that outgrows it.
        buffer.reserveCapacity(items.reduce(0) { $0 + $1.encodedSize })
        var messages = 0
        for item in items {
            switch item {
            case .publish(let message, let packetID, let dup):
                messages += 1
                message.encodePublish(packetID: packetID, dup: dup, into: &buffer)
            case .packet(let packet):
                do {
                    try packet.encode(into: &buffer)
                } catch {
                    logger.error("cannot encode packet", metadata: ["error": "\(error)"])
                }
            }
        }
        return messages
    }
}
