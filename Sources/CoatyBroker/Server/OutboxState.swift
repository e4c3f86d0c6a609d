/// The state of one ``Outbox``: its queue, the client's unread bytes, and who writes to the socket
/// next. A value that takes events and returns what to do; the outbox keeps it behind its lock, with
/// the continuations of the writer task and of the reader waiting for room.
///
/// ## Direct writes
///
/// A packet routed to a client costs two thread wake-ups if its writer task sends it: the publisher's
/// reader runs, then the receiver's writer. So a reader that routes packets to an outbox whose writer
/// waits with nothing queued or unwritten may **claim** it (``Writer/claimed``) and send what is
/// queued itself, once, at the end of handling the packets of one read (``beginDirectWrite()``): a
/// read carrying many PUBLISHes still makes one write per receiver. While the outbox is claimed or
/// being written directly, the writer task keeps waiting and every enqueue only appends, whoever makes
/// it; the direct writer then hands the writer task what the socket did not take, followed by what
/// was queued meanwhile (``endDirectWrite(unsent:messages:)``). Bytes thus leave in queue order, and
/// only one party writes at a time. Under load the writer is busy, nothing can be claimed, and it
/// batches as before; a claimed batch of more than ``directWriteItemLimit`` packets goes to the
/// writer task too.
struct OutboxState: Sendable {
    /// Who writes to the connection's socket next.
    enum Writer: Sendable, Equatable {
        /// The writer task writes a batch, or has not yet asked for one: enqueued items wait for it.
        case busy
        /// The writer task waits for items, and nothing is unwritten.
        case waiting
        /// A reader will write what is queued itself, at the end of its read; the writer keeps waiting.
        case claimed
        /// The claiming reader is sending a batch without waiting; the writer keeps waiting.
        case writingDirectly
    }

    /// What the writer task gets when it is woken.
    enum WriterWake: Sendable {
        /// Items to encode and write.
        case items([Outbox.Item])
        /// The bytes a direct write could not send: take them with ``takeUnsent()``.
        case unsent
        /// Nothing more: the outbox is finished and drained.
        case end
    }

    /// What ``next()`` tells the writer task.
    enum NextStep: Sendable {
        case write([Outbox.Item])
        case end
        /// Wait to be woken with a ``WriterWake``.
        case wait
    }

    /// What ``beginDirectWrite()`` tells the claiming reader.
    enum DirectWriteStart: Sendable {
        /// Encode and send these items, then call ``endDirectWrite(unsent:messages:)``.
        case write([Outbox.Item])
        /// Nothing to send directly; wake the writer task with this, if anything.
        case skip(WriterWake?)
    }

    /// What ``endDirectWrite(unsent:messages:)`` and ``wrote()`` ask the outbox to do.
    struct WriteEnd: Sendable {
        /// Wake the waiting writer task with this, if anything.
        var wakeWriter: WriterWake?
        /// Resume the reader waiting for room (with `true`).
        var wakeReader = false
        /// Whether the client's reader was waiting for room: the client read while its reader paused.
        var readerWasWaiting = false
    }

    /// The bounds of an outbox: the same for every connection of a broker, so its outboxes share
    /// one object rather than each holding five words.
    final class Limits: Sendable {
        /// Packets beyond which QoS 0 PUBLISHes are dropped.
        let capacity: Int
        /// Bytes of queued PUBLISHes (topics and payloads) beyond which QoS 0 PUBLISHes are dropped.
        let byteCapacity: Int
        /// Unread bytes beyond which the client is a slow consumer.
        let unreadLimit: Int
        /// Unread bytes from which the client's reader waits for room.
        let pauseBytes: Int
        /// Queued packets from which the client's reader waits for room, whatever their bytes.
        let pauseItems: Int

        /// The default of `pauseItems`.
        static let defaultPauseItems = 4096

        init(capacity: Int, byteCapacity: Int, unreadLimit: Int, pauseItems: Int = Limits.defaultPauseItems) {
            self.capacity = max(1, capacity)
            self.byteCapacity = max(1, byteCapacity)
            self.unreadLimit = max(1, unreadLimit)
            self.pauseBytes = max(1, min(self.unreadLimit / 2, 1 << 20))
            self.pauseItems = max(1, pauseItems)
        }
    }

    let limits: Limits
    var capacity: Int { self.limits.capacity }
    var byteCapacity: Int { self.limits.byteCapacity }
    var unreadLimit: Int { self.limits.unreadLimit }
    var pauseBytes: Int { self.limits.pauseBytes }
    var pauseItems: Int { self.limits.pauseItems }
    /// The most packets a reader writes directly; a larger batch is bulk traffic, and the writer task
    /// takes it, as it did before direct writes. With 4 publishers sending batches of 100 QoS 0
    /// messages to one subscriber, each publisher's reader writing its batch itself took 15 % off
    /// the messages per second, where the writer, running beside the readers, gathers theirs into
    /// larger writes. A request, a response or an acknowledgement is one packet.
    static let directWriteItemLimit = 16

    private(set) var items: [Outbox.Item] = []
    /// The topic and payload bytes of the queued PUBLISHes.
    private(set) var publishedBytes = 0
    /// The encoded bytes of the queued items.
    private(set) var queuedBytes = 0
    /// The encoded bytes of the batch being written (by the writer task or directly) and not finished.
    private(set) var writingBytes = 0
    private(set) var writer = Writer.busy
    /// Whether the client's reader waits in ``Outbox/waitForRoom()``.
    private(set) var isReaderWaiting = false
    private(set) var isFinished = false
    private(set) var droppedCount = 0
    /// Batches taken for writing, by the writer task or directly: the client's reading progress.
    private(set) var batchesTaken: UInt64 = 0
    /// Why the outbox was aborted, if it was given.
    private(set) var abortReason: String?
    /// The bytes of a direct write's batch that the socket did not take, and the PUBLISH packets in
    /// that batch, until the writer task takes them.
    private var unsent: (bytes: [UInt8], messages: Int)?

    init(limits: Limits) {
        self.limits = limits
    }

    init(capacity: Int, byteCapacity: Int, unreadLimit: Int, pauseItems: Int = Limits.defaultPauseItems) {
        self.init(
            limits: Limits(
                capacity: capacity,
                byteCapacity: byteCapacity,
                unreadLimit: unreadLimit,
                pauseItems: pauseItems
            )
        )
    }

    /// The bytes queued to the client that it has not read: queued plus being written.
    var unreadBytes: Int { self.queuedBytes + self.writingBytes }

    /// Whether at least half of either queue bound is taken.
    var isHalfFull: Bool {
        self.items.count * 2 >= self.capacity || self.publishedBytes * 2 >= self.byteCapacity
    }

    /// Whether the client's reader should wait for room before handling more of its packets.
    var needsRoom: Bool { self.unreadBytes >= self.pauseBytes || self.items.count >= self.pauseItems }

    // MARK: - Producers

    /// Queues an item (see ``Outbox`` for the policy).
    ///
    /// - Parameter mayClaim: Whether the caller writes claimed outboxes at the end of its read.
    /// - Returns: The result; whether the caller claimed the outbox (and must write it directly); the
    ///   items to wake the writer task with, if it was waiting and is not claimed.
    mutating func enqueue(
        _ item: Outbox.Item,
        droppable: Bool,
        mayClaim: Bool
    ) -> (result: Outbox.EnqueueResult, claimed: Bool, wake: [Outbox.Item]?) {
        if self.isFinished { return (.dropped, false, nil) }
        let size = item.publishedSize
        let encodedSize = item.encodedSize
        let exceedsUnread = self.unreadBytes > 0 && self.unreadBytes + encodedSize > self.unreadLimit
        if droppable,
            self.items.count >= self.capacity || (self.publishedBytes + size > self.byteCapacity && !self.items.isEmpty)
                || exceedsUnread
        {
            self.droppedCount += 1
            return (.dropped, false, nil)
        }
        if exceedsUnread { return (.overflow, false, nil) }
        self.items.append(item)
        self.publishedBytes += size
        self.queuedBytes += encodedSize
        if self.writer == .waiting {
            if mayClaim {
                self.writer = .claimed
                return (.queued, true, nil)
            }
            self.writer = .busy
            return (.queued, false, self.takeAll())
        }
        return (self.isHalfFull ? .queuedCongested : .queued, false, nil)
    }

    /// Marks the outbox finished: later enqueues are dropped, the writer task ends once drained.
    ///
    /// - Returns: Whether to end the waiting writer task (not while a direct write owns it: the direct
    ///   writer hands over), and whether to resume the reader waiting for room (with `false`).
    mutating func finish() -> (endWriter: Bool, wakeReader: Bool) {
        self.isFinished = true
        let wakeReader = self.isReaderWaiting
        self.isReaderWaiting = false
        guard self.writer == .waiting else { return (false, wakeReader) }
        self.writer = .busy
        return (true, wakeReader)
    }

    /// Drops everything queued and keeps the first reason given; call ``finish()`` next.
    mutating func abort(reason: String?) {
        self.items = []
        self.publishedBytes = 0
        self.queuedBytes = 0
        if self.abortReason == nil { self.abortReason = reason }
    }

    // MARK: - The writer task

    /// The writer task asks for its next batch.
    mutating func next() -> NextStep {
        if !self.items.isEmpty { return .write(self.takeAll()) }
        if self.isFinished { return .end }
        self.writer = .waiting
        return .wait
    }

    /// The writer task (or a test draining the queue) handed its batch to the socket.
    mutating func wrote() -> WriteEnd {
        self.writingBytes = 0
        return self.checkRoom()
    }

    // MARK: - Direct writes

    /// The claiming reader starts its direct write: takes every queued item as one batch, unless there
    /// are none (the outbox was aborted) or more than ``directWriteItemLimit``: then the writer task
    /// gets them, or ends if the outbox is finished.
    mutating func beginDirectWrite() -> DirectWriteStart {
        precondition(self.writer == .claimed, "a direct write needs a claimed outbox")
        guard !self.items.isEmpty, self.items.count <= Self.directWriteItemLimit else {
            return .skip(self.handOver())
        }
        self.writer = .writingDirectly
        return .write(self.takeAll())
    }

    /// The direct write ended.
    ///
    /// - Parameters:
    ///   - unsent: The bytes of the batch the socket did not take, for the writer task to write.
    ///   - messages: The PUBLISH packets in the batch, counted by whoever finishes writing it.
    mutating func endDirectWrite(unsent: [UInt8], messages: Int) -> WriteEnd {
        precondition(self.writer == .writingDirectly, "no direct write in progress")
        guard unsent.isEmpty else {
            self.writer = .busy
            self.unsent = (unsent, messages)
            return WriteEnd(wakeWriter: .unsent)
        }
        self.writingBytes = 0
        var end = self.checkRoom()
        end.wakeWriter = self.handOver()
        return end
    }

    /// The writer task, woken with ``WriterWake/unsent``, takes the bytes to write and the number of
    /// PUBLISH packets to count once they are written.
    mutating func takeUnsent() -> (bytes: [UInt8], messages: Int) {
        defer { self.unsent = nil }
        return self.unsent ?? ([], 0)
    }

    /// Returns the socket to the writer task after a direct write: wakes it if items were queued
    /// meanwhile or the outbox was finished, otherwise lets it wait.
    private mutating func handOver() -> WriterWake? {
        if !self.items.isEmpty {
            self.writer = .busy
            return .items(self.takeAll())
        }
        if self.isFinished {
            self.writer = .busy
            return .end
        }
        self.writer = .waiting
        return nil
    }

    // MARK: - The reader waiting for room

    /// The client's reader asks whether to wait for room.
    ///
    /// - Returns: `true` if there is room, `false` if the outbox is finished (the connection is
    ///   closing), `nil` if the reader waits (woken by ``wrote()`` or ``endDirectWrite(unsent:messages:)``).
    mutating func waitForRoom() -> Bool? {
        if self.isFinished { return false }
        if !self.needsRoom { return true }
        self.isReaderWaiting = true
        return nil
    }

    /// After a batch was written: whether the reader waiting for room was waiting and may go on now.
    private mutating func checkRoom() -> WriteEnd {
        guard self.isReaderWaiting else { return WriteEnd() }
        if self.needsRoom { return WriteEnd(readerWasWaiting: true) }
        self.isReaderWaiting = false
        return WriteEnd(wakeReader: true, readerWasWaiting: true)
    }

    /// Takes every queued item as one batch to write.
    mutating func takeAll() -> [Outbox.Item] {
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
