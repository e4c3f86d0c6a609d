import CoatyCore
import CoatyMQTTPackets
import CoatySockets
import Synchronization

/// Serves one client connection, over TCP, TLS or WebSocket: a reader (this task) that decodes packets
/// and updates the shared state, and a writer child task that drains the connection's ``Outbox`` into
/// the socket in batches. While that writer is idle, readers routing packets to a TCP or TLS client
/// send them themselves at the end of their read (see ``OutboxState``). An idle plain TCP connection
/// has neither: it parks until something needs a task again (see ``ParkedConnections``).
/// The connect timeout and keep-alive are enforced by the broker's sweeper through an ``ActivityWatch``.
struct ClientConnection: Sendable {
    let broker: MQTTBroker
    let socket: any ByteStreamConnection
    let id: ConnectionID

    /// Why a connection ended.
    enum CloseReason: Sendable, CustomStringConvertible {
        /// The client sent DISCONNECT: the will is discarded, and replies already queued are flushed.
        case disconnected
        /// CONNECT was refused with a non-zero CONNACK, which is flushed before closing.
        case refused(MQTTConnectReturnCode)
        /// The peer closed or reset the connection, or the socket failed.
        case connectionLost(String)
        /// The client broke the protocol or sent a malformed packet; nothing more is sent.
        case protocolViolation(String)
        /// The watchdog fired: no CONNECT in time, or 1.5 × keep-alive of silence.
        case timedOut
        /// The client left too many bytes unread: more than the bound, or, while its reader waited for
        /// it to read, for 1.5 × keep-alive. Nothing more is sent.
        case slowConsumer(String)
        /// A broker-wide limit would be exceeded (see
        /// ``MQTTBroker/Configuration/maximumUnfinishedPacketBytes``). Nothing more is sent.
        case overLimit(String)
        /// The broker is shutting down.
        case cancelled

        /// Whether what is already queued is written before the connection closes: the refusing
        /// CONNACK, or the replies to packets the client sent before its DISCONNECT.
        var flushesQueue: Bool {
            switch self {
            case .disconnected, .refused: true
            default: false
            }
        }

        var description: String {
            switch self {
            case .disconnected: "disconnected"
            case .refused(let code): "refused (\(code))"
            case .connectionLost(let reason): "connection lost: \(reason)"
            case .protocolViolation(let reason): "protocol violation: \(reason)"
            case .timedOut: "timed out"
            case .slowConsumer(let reason): "slow consumer: \(reason)"
            case .overLimit(let reason): "over a limit: \(reason)"
            case .cancelled: "broker stopping"
            }
        }
    }

    private var configuration: MQTTBroker.Configuration { self.broker.configuration }
    private var logger: CoatyLogger { self.broker.logger }

    /// How ``serve()`` ended.
    enum Served: Sendable {
        /// The connection is closed and cleaned up.
        case closed
        /// The connection waits with no task of its own (see ``ParkedConnections``); it is served again
        /// when woken.
        case parked
    }

    /// Serves the connection until it closes or parks.
    func serve() async -> Served {
        let (state, outbox, watch) = self.opened()
        return await self.serve(state, outbox: outbox, watch: watch, resuming: nil)
    }

    /// Serves a parked connection again, from what woke it.
    func serve(_ woken: ParkedConnections.Woken) async -> Served {
        await self.serve(woken.state, outbox: woken.state.outbox, watch: woken.state.watch, resuming: woken.wake)
    }

    private func serve(
        _ state: ReaderState,
        outbox: Outbox,
        watch: ActivityWatch,
        resuming wake: Result<DirectReadOutcome, any Error>?
    ) async -> Served {
        var wake = wake
        while true {
            let end: ReaderEnd
            do {
                // An `async let`, not a task group: its child task is allocated in this task's memory,
                // which saves a connection a task group and a task object of its own.
                async let _: Void = Self.write(
                    outbox,
                    to: self.socket,
                    traffic: self.broker.traffic,
                    logger: self.logger
                )
                end = await self.read(state, outbox: outbox, watch: watch, resuming: wake.take())
                // Leaving this scope cancels the writer and waits for it. Cancelled, it writes only what
                // the socket takes without waiting: a client that stopped reading cannot hold the
                // connection open. Before parking, the outbox has ended it already.
                if case .close(let reason) = end {
                    if reason.flushesQueue { outbox.finish() } else { outbox.abort() }
                }
            }
            switch end {
            case .idle(let edges):
                if self.park(state, since: edges) { return .parked }
            case .close(let reason):
                if reason.flushesQueue { await self.shutdown() }
                self.closed(reason, state: state)
                return .closed
            }
        }
    }

    /// Ends a connection whose writer has flushed: a WebSocket peer gets a close frame (1000) before
    /// FIN, if the socket takes it at once, so a browser sees a normal closure rather than 1006; over
    /// TCP this is only the FIN.
    private func shutdown() async {
        await self.socket.shutdownOutput()
        self.socket.close()
    }

    // The reader and the writer keep only what lives across their suspensions in their async frames.
    // A task keeps the memory its deepest chain of frames needed until it ends (in slabs of about
    // 1 KiB), so everything they do synchronously (setting up, handling packets, encoding, cleaning
    // up, logging) is in functions of its own, never inlined into them, and the reader's state is one
    // object instead of a value in the frame; the writer's wait has no cancellation handler (see
    // `Outbox.next()`). An idle plain TCP connection keeps no task at all (see ``ParkedConnections``).

    /// Makes the reader's state, the connection's outbox and its activity watch, and registers the
    /// watch with the sweeper.
    @inline(never)
    private func opened() -> (ReaderState, Outbox, ActivityWatch) {
        let watch = ActivityWatch(
            socket: self.socket,
            limit: self.configuration.connectTimeout,
            clock: self.broker.clock
        )
        let outbox = Outbox(socket: self.socket, watch: watch, limits: self.broker.outboxLimits)
        self.broker.watches.withLock { $0[self.id] = watch }
        let state = ReaderState(
            connection: self,
            outbox: outbox,
            watch: watch,
            decoder: MQTTPacketDecoder(maximumPacketSize: self.configuration.maximumPacketSize),
            parkingSocket: self.socket as? TCPConnection
        )
        return (state, outbox, watch)
    }

    /// Cleans up after the reader and the writer have ended: unregisters the watch, closes the socket,
    /// detaches the session (publishing the will unless the client disconnected) and reports.
    @inline(never)
    private func closed(_ reason: CloseReason, state: ReaderState) {
        _ = self.broker.watches.withLock { $0.removeValue(forKey: self.id) }
        self.socket.close()
        self.handler.detach(reason, state: state)
    }

    /// The socket-free half of the reader, which handles packets against the shared state.
    private var handler: PacketHandler {
        PacketHandler(broker: self.broker, id: self.id, remoteDescription: self.socket.remoteDescription)
    }

    // MARK: - Writer

    /// Drains the outbox into the socket, a batch at a time, when no reader writes it directly (see
    /// ``OutboxState``).
    ///
    /// A batch written while the client's reader waits for room counts as activity on the watch
    /// (``Outbox/wrote()`` touches it): the client reads, and the broker, not the client, holds back
    /// its packets.
    private static func write(
        _ outbox: Outbox,
        to socket: any ByteStreamConnection,
        traffic: BrokerTraffic,
        logger: CoatyLogger
    ) async {
        var buffer: [UInt8] = []
        while let items = await outbox.next() {
            let messages = Self.prepare(items, from: outbox, into: &buffer, logger: logger)
            do {
                // An empty batch stands for what a direct write left: over TLS, already encrypted.
                if items.isEmpty, let direct = outbox.directSocket {
                    try await direct.writeLeftover(buffer)
                } else {
                    try await socket.write(buffer)
                }
            } catch {
                // Closes the socket and wakes the reader, wherever it waits; it cleans up.
                outbox.abort()
                return
            }
            traffic.sent(bytes: buffer.count, messages: messages)
            outbox.wrote()
        }
    }

    /// Puts a batch's bytes into `buffer`, replacing what it held: encodes its items, or, for an empty
    /// batch, takes the bytes a direct write left (see ``Outbox/next()``).
    ///
    /// - Returns: The number of PUBLISH packets in the batch.
    @inline(never)
    private static func prepare(
        _ items: [Outbox.Item],
        from outbox: Outbox,
        into buffer: inout [UInt8],
        logger: CoatyLogger
    ) -> Int {
        guard items.isEmpty else { return Outbox.encode(items, into: &buffer, logger: logger) }
        let unsent = outbox.takeUnsent()
        buffer = unsent.bytes
        return unsent.messages
    }

    // MARK: - Reader

    /// The most bytes one read takes from the socket.
    static let readSize = 65_536

    /// How the reader ended.
    enum ReaderEnd {
        case close(CloseReason)
        /// Nothing to read and the writer ended (``Outbox/park(wakingReader:)``): the connection may
        /// park, unless a read edge newer than `edges` came.
        case idle(edges: UInt64)
    }

    private func read(
        _ state: ReaderState,
        outbox: Outbox,
        watch: ActivityWatch,
        resuming wake: Result<DirectReadOutcome, any Error>?
    ) async -> ReaderEnd {
        var wake = wake
        while true {
            if state.yieldIsDue {
                state.yieldIsDue = false
                await Task.yield()
            }
            var next: ReaderStep?
            do {
                // The reactor's thread handles the read when it can (see `inlineHandler`).
                let outcome: DirectReadOutcome
                if let woken = wake.take() {
                    outcome = try woken.get()
                } else if let read = try self.readOrIdle(state, outbox: outbox) {
                    switch read {
                    case .bytes(let bytes): outcome = .bytes(bytes)
                    case .idle(let edges): return .idle(edges: edges)
                    case .writerBusy(let tcp, let edges):
                        outcome = try await tcp.read(
                            maxBytes: Self.readSize,
                            handlingUpTo: Self.inlineReadLimit,
                            after: edges,
                            self.readHandler(state, outbox: outbox, watch: watch)
                        )
                    }
                } else if let (stream, handler) = self.inlineHandler(state, outbox: outbox, watch: watch) {
                    outcome = try await stream.read(
                        maxBytes: Self.readSize,
                        handlingUpTo: Self.inlineReadLimit,
                        handler
                    )
                } else {
                    outcome = .bytes(try await self.socket.read(maxBytes: Self.readSize))
                }
                next = self.take(outcome, state, outbox: outbox, watch: watch)
            } catch is CancellationError {
                return .close(.cancelled)
            } catch {
                if let reason = outbox.abortReason { return .close(.slowConsumer(reason)) }
                if watch.hasFired { return .close(.timedOut) }
                if Task.isCancelled { return .close(.cancelled) }
                return .close(.connectionLost("\(error)"))
            }
            while let step = next {
                switch step {
                case .close(let reason): return .close(reason)
                case .pace: await self.pace(state)
                case .waitForWriter:
                    if await !outbox.waitForRoom() { return .close(self.stoppedWaiting(outbox: outbox, watch: watch)) }
                }
                next = self.handleBuffered(state, outbox: outbox, watch: watch)
            }
        }
    }

    /// The largest socket read the reactor's thread handles for a connected client (see
    /// ``inlineHandler(_:outbox:watch:)``); over TLS, in encrypted bytes.
    ///
    /// A request, a response or an acknowledgement fits; a read of a burst does not, and goes to the
    /// reader's task, so bulk traffic is handled on all cores rather than on the one reactor thread.
    static let inlineReadLimit = 2_048

    /// For a connected client over TCP or TLS, the stream and what the reactor's thread does with a
    /// small read while the reader's task waits (``DirectByteStream/read(maxBytes:handlingUpTo:_:)``):
    /// a small message then costs no hand-over from the thread that learns of it to the reader's task,
    /// which is most of its delay through the broker on an idle machine. The handling is the same
    /// synchronous ``handleBuffered(_:outbox:watch:)`` the task runs; a step that must wait (pacing,
    /// room, closing) goes back to the task in ``ReaderState/inlineStep``. `nil` before CONNECT
    /// (authentication may hash a password), and over WebSocket, whose framing runs in the task.
    @inline(never)
    func inlineHandler(
        _ state: ReaderState,
        outbox: Outbox,
        watch: ActivityWatch
    ) -> (any DirectByteStream, @Sendable (UnsafeRawBufferPointer) -> Bool)? {
        guard state.session != nil, let stream = outbox.directSocket else {
            return nil
        }
        return (stream, self.readHandler(state, outbox: outbox, watch: watch))
    }

    /// What the reactor's thread does with a small read (see ``inlineHandler(_:outbox:watch:)``):
    /// handles it, and keeps waiting unless a step needs the reader's task.
    func readHandler(
        _ state: ReaderState,
        outbox: Outbox,
        watch: ActivityWatch
    ) -> @Sendable (UnsafeRawBufferPointer) -> Bool {
        { bytes in self.handleInline(bytes, state, outbox: outbox, watch: watch) }
    }

    /// The reactor thread's handling of a small read, for a waiting reader (``readHandler(_:outbox:watch:)``)
    /// or a parked one: returns whether the reader may keep waiting.
    func handleInline(
        _ bytes: UnsafeRawBufferPointer,
        _ state: ReaderState,
        outbox: Outbox,
        watch: ActivityWatch
    ) -> Bool {
        state.directWrites?.includesEncrypting = true
        defer { state.directWrites?.includesEncrypting = false }
        state.inlineStep = self.handle(bytes, state, outbox: outbox, watch: watch)
        return state.inlineStep == nil
    }

    /// Handles a read: the bytes the task read, or where the reactor's thread stopped handling them.
    ///
    /// A read that finds data does not suspend; the reader yields now and then (``ReaderState/yieldIsDue``)
    /// so that a client that keeps sending cannot monopolise an executor thread and starve the writers
    /// that drain its messages: after a full read (more is waiting) or every 16 reads. Not after every
    /// read: a yield is a trip through the executor's queue, often to another thread, on the path of
    /// every message.
    @inline(never)
    private func take(
        _ outcome: DirectReadOutcome,
        _ state: ReaderState,
        outbox: Outbox,
        watch: ActivityWatch
    ) -> ReaderStep? {
        guard case .bytes(let bytes) = outcome else { return state.inlineStep.take() }
        if bytes.isEmpty { return .close(watch.hasFired ? .timedOut : .connectionLost("closed by peer")) }
        state.readsSinceYield += 1
        if bytes.count >= Self.readSize || state.readsSinceYield >= 16 {
            state.readsSinceYield = 0
            state.yieldIsDue = true
        }
        return bytes.withUnsafeBytes { self.handle($0, state, outbox: outbox, watch: watch) }
    }

    /// Takes the bytes of one read into the decoder and handles the whole packets they complete: the
    /// same on the reader's task and on the reactor's thread.
    private func handle(
        _ bytes: UnsafeRawBufferPointer,
        _ state: ReaderState,
        outbox: Outbox,
        watch: ActivityWatch
    ) -> ReaderStep? {
        self.broker.traffic.received(bytes: bytes.count)
        if !state.sawFirstByte {
            state.sawFirstByte = true
            // Reject a non-CONNECT first packet from its first byte, before buffering anything.
            if bytes[0] != 0x10 { return .close(.protocolViolation("first packet is not CONNECT")) }
        }
        state.decoder.append(bytes)
        return self.handleBuffered(state, outbox: outbox, watch: watch)
    }

    /// What ``handleBuffered(_:outbox:watch:)`` needs from the reader before it can go on.
    enum ReaderStep {
        case close(CloseReason)
        /// This client's publishes are filling other clients' queues: wait before the next packet.
        case pace
        /// This client has many bytes unread: wait for it to read before handling its next packet.
        case waitForWriter
    }

    /// Why the reader's wait for room ended without room: the connection is closing.
    @inline(never)
    private func stoppedWaiting(outbox: Outbox, watch: ActivityWatch) -> CloseReason {
        if let reason = outbox.abortReason { return .slowConsumer(reason) }
        if watch.hasFired {
            return .slowConsumer("\(outbox.unreadBytes) bytes unread and nothing read for 1.5 × keep-alive")
        }
        if Task.isCancelled { return .cancelled }
        return .connectionLost("closed while the client had bytes unread")
    }

    /// Decodes and handles the buffered packets (see ``PacketHandler/handleBuffered(_:outbox:watch:)``);
    /// returns `nil` when more bytes are needed.
    ///
    /// A synchronous function of its own, never inlined into the reader, so handling a packet adds
    /// nothing to the reader's async frame (see the comment above ``opened()``).
    @inline(never)
    private func handleBuffered(_ state: ReaderState, outbox: Outbox, watch: ActivityWatch) -> ReaderStep? {
        self.handler.handleBuffered(state, outbox: outbox, watch: watch)
    }

    /// Flow control for a publisher that outpaces some subscriber.
    ///
    /// Before reading more from this client, waits in 200 µs steps (at most 10 ms per read) while a
    /// congested subscriber is **making progress** (acknowledging, or its writer taking batches). When
    /// no congested subscriber made progress for 5 ms they are treated as stuck and no longer waited
    /// for: their queue bound and drop policy apply instead, so a stuck client cannot stall publishers.
    ///
    /// 5 ms, not less: on busy cores a live subscriber is sometimes not scheduled for a millisecond,
    /// and a shorter limit drops messages of subscribers that are only waiting for a core. A truly
    /// stuck subscriber costs each of its publishers 5 ms once, until it moves again.
    private func pace(_ state: ReaderState) async {
        let sessions = state.congestedSessions
        let connections = state.congestedConnections
        state.congestedSessions = []
        state.congestedConnections = []
        func snapshot() -> [String: UInt64] {
            self.broker.core.withLock { core in
                var progress: [String: UInt64] = [:]
                for id in sessions {
                    if let backlog = core.sessions.backlog(of: id), backlog.isCongested {
                        progress["\(id)"] = backlog.acknowledgements
                    }
                }
                for id in connections {
                    if let backlog = core.outboxes[id]?.backlog, backlog.isCongested {
                        progress["\(id)"] = backlog.batchesTaken
                    }
                }
                return progress
            }
        }
        // Skip consumers already found stuck that have not moved since.
        var previous = snapshot().filter { state.stuckConsumers[$0.key] != $0.value }
        var stalledSteps = 0
        for _ in 0..<50 where !previous.isEmpty {
            do { try await Task.sleep(for: .microseconds(200)) } catch { return }
            let current = snapshot()
            // Keep waiting only while a consumer that is still congested made progress within 5 ms
            // (a writer may legitimately sit in one socket write for a while).
            let progressing = current.contains { key, value in previous[key].map { value != $0 } ?? false }
            stalledSteps = progressing ? 0 : stalledSteps + 1
            if stalledSteps >= 25 {
                if state.stuckConsumers.count > 1000 { state.stuckConsumers = [:] }
                for (key, value) in current where previous[key] == value { state.stuckConsumers[key] = value }
                return
            }
            if progressing { previous = current } else { previous = previous.filter { current[$0.key] != nil } }
        }
    }
}
