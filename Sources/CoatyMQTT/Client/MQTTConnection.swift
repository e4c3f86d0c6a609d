package import CoatyCore
import CoatyMQTTPackets
import CoatySockets
package import CoatyTransport
import Synchronization

/// One open MQTT 3.1.1 connection: a reader, a writer and a keep-alive timer over a TCP or WebSocket
/// connection.
///
/// ## Concurrency
///
/// All mutable state is an ``MQTTConnectionState`` behind one `Mutex`; continuations are resumed after
/// the lock is released. Four loops run as child tasks of ``MQTTTransport``'s task group:
/// - the **reader** decodes packets, delivers PUBLISHes to `onMessage` and completes acknowledgements;
/// - the **writer** takes everything queued in the outbound buffer and writes it with one system call,
///   so packets queued while a write is in progress are coalesced into the next one;
/// - the **keep-alive** loop sends PINGREQ when idle and fails the connection when it stays unanswered;
/// - the **acknowledgement watchdog** fails the connection when an exchange stays unacknowledged.
///
/// The first failure (I/O error, EOF, malformed packet, protocol violation, missing PINGRESP) is
/// recorded once; it closes the socket and fails every pending and later operation.
package final class MQTTConnection: TransportConnection, Sendable {
    /// Above this many queued outbound bytes, publishers wait for the writer (backpressure), and so does
    /// the reader, whose packets queue acknowledgements: a broker that floods QoS 1 PUBLISHes and never
    /// reads our PUBACKs would otherwise grow the buffer without bound (4 bytes a message).
    static let outboundHighWater = 1 << 20

    let socket: any ByteStreamConnection
    let configuration: MQTTTransport.Configuration
    let broker: MQTTBrokerAddress
    private let onMessage: @Sendable (TransportMessage) -> Void
    let state: Mutex<MQTTConnectionState>

    init(
        socket: any ByteStreamConnection,
        broker: MQTTBrokerAddress,
        configuration: MQTTTransport.Configuration,
        onMessage: @escaping @Sendable (TransportMessage) -> Void
    ) {
        self.socket = socket
        self.broker = broker
        self.configuration = configuration
        self.onMessage = onMessage
        self.state = Mutex(MQTTConnectionState(now: .now, keepsSession: !configuration.cleanSession))
    }

    private var maximumInFlight: Int { max(1, self.configuration.maximumInFlight) }

    /// The failure that ended the connection, if any.
    package var failure: TransportError? { self.state.withLock { $0.failure } }

    // MARK: - Persistent session

    /// Queues what a resumed persistent session has to send again, before anything new; call after
    /// the handshake, before the writer starts.
    func resume(_ session: MQTTSessionState) {
        self.state.withLock { $0.resume(session) }
    }

    /// With a persistent session: what is left of it once the connection has ended (empty before).
    var sessionLeft: MQTTSessionState { self.state.withLock { $0.sessionLeft } }

    // MARK: - Handshake

    /// Sends CONNECT and waits for CONNACK.
    ///
    /// - Returns: A decoder holding any bytes received after the CONNACK, for the reader, and whether
    ///   the broker kept a session for the client (CONNACK's session present flag).
    /// - Throws: `TransportError` `.connectionRefused` (non-zero return code), `.protocolViolation`,
    ///   `.connectionLost`.
    func handshake(_ connect: MQTTConnectPacket) async throws -> (MQTTPacketDecoder, sessionPresent: Bool) {
        let bytes: [UInt8]
        do {
            bytes = try MQTTPacket.connect(connect).encoded()
        } catch {
            throw TransportError(.invalidArgument, "cannot encode CONNECT: \(error)", underlying: error)
        }
        do {
            try await self.socket.write(bytes)
        } catch let error as CancellationError {
            throw error
        } catch {
            throw TransportError(.connectFailed, "cannot send CONNECT to \(self.broker)", underlying: error)
        }
        self.state.withLock { $0.lastSent = .now }
        var decoder = MQTTPacketDecoder(maximumPacketSize: self.configuration.maximumPacketSize)
        while true {
            let packet: MQTTPacket?
            do {
                packet = try decoder.next()
            } catch {
                throw TransportError(
                    .protocolViolation,
                    "malformed packet instead of CONNACK: \(error)",
                    underlying: error
                )
            }
            if let packet {
                guard case .connack(let connack) = packet else {
                    throw TransportError(.protocolViolation, "the broker sent \(packet.type) before CONNACK")
                }
                guard connack.returnCode == .accepted else {
                    throw TransportError(
                        .connectionRefused,
                        "the broker refused the connection: \(connack.returnCode)"
                    )
                }
                self.state.withLock { $0.lastReceived = .now }
                return (decoder, connack.sessionPresent)
            }
            let chunk: [UInt8]
            do {
                chunk = try await self.socket.read()
            } catch let error as CancellationError {
                throw error
            } catch {
                throw TransportError(.connectFailed, "no CONNACK from \(self.broker)", underlying: error)
            }
            guard !chunk.isEmpty else {
                throw TransportError(.connectFailed, "\(self.broker) closed the connection before CONNACK")
            }
            decoder.append(chunk)
        }
    }

    // MARK: - TransportConnection

    package func publish(_ message: TransportMessage) async throws {
        let packet = try Self.packet(for: message)
        self.socket.noteExchange()
        if packet.qos == .atMostOnce {
            while try !self.queueAtMostOnce(packet) { try await self.waitForDrain() }
        } else {
            try await self.publishAcknowledged(packet)
        }
    }

    /// Queues a QoS 0 message for the writer; a QoS 1 or 2 message, which waits for its
    /// acknowledgement, and a full outbound buffer return `false`.
    package func publishWithoutWaiting(_ message: TransportMessage) throws -> Bool {
        let packet = try Self.packet(for: message)
        self.socket.noteExchange()
        return packet.qos == .atMostOnce ? try self.queueAtMostOnce(packet) : false
    }

    private static func packet(for message: TransportMessage) throws(TransportError) -> MQTTPublishPacket {
        do {
            try TopicName.validate(message.topic)
        } catch {
            throw TransportError(.invalidArgument, "\(error)", underlying: error)
        }
        return MQTTPublishPacket(
            topic: message.topic,
            payload: message.payload,
            qos: MQTTQoS(message.qos),
            retain: message.retain
        )
    }

    /// Queues a QoS 0 PUBLISH and wakes the writer. Returns `false` when the outbound buffer is full.
    private func queueAtMostOnce(_ packet: MQTTPublishPacket) throws -> Bool {
        try self.queueWithoutWaiting { _ in (.publish(packet), nil) }
    }

    /// Queues a packet that no one waits for and wakes the writer. Returns `false` when the outbound
    /// buffer is full or `prepare` cannot make the packet now.
    ///
    /// `prepare` runs under the lock. A packet identifier it records in `pending` comes back with the
    /// packet, and is released again if the packet cannot be encoded.
    private func queueWithoutWaiting(
        _ prepare: (inout MQTTConnectionState) -> (packet: MQTTPacket, packetID: UInt16?)?
    ) throws -> Bool {
        enum Outcome {
            case queued(CheckedContinuation<Void, Never>?)
            case full
            case failed(any Error)
        }
        let outcome: Outcome = self.state.withLock { state in
            if let failure = state.unusable { return .failed(failure) }
            guard state.outbound.count < Self.outboundHighWater, let (packet, id) = prepare(&state) else {
                return .full
            }
            do {
                try state.enqueue(packet)
            } catch {
                if let id { state.pending[id] = nil }
                return .failed(TransportError(.invalidArgument, "\(error)", underlying: error))
            }
            return .queued(state.takeWriterWaiter())
        }
        switch outcome {
        case .queued(let writer):
            writer?.resume()
            return true
        case .failed(let error):
            throw error
        case .full:
            return false
        }
    }

    /// Waits until the writer has taken the outbound buffer, or the task is cancelled.
    ///
    /// A publisher waits only while the connection is usable. The reader (`whileClosing`) waits on
    /// while a DISCONNECT is queued too: the writer is still to send it, and failing the connection
    /// here would drop it, with the messages queued before it, and make the broker publish the will.
    /// Cancellable like the other waits: a broker that stopped reading would otherwise hold a cancelled
    /// publisher until the connection fails, up to a keep-alive later.
    private func waitForDrain(whileClosing: Bool = false) async throws {
        let token = self.state.withLock { $0.makeToken() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome {
                    case wait
                    case ready
                    case failed(any Error)
                }
                let outcome: Outcome = self.state.withLock { state in
                    if let failure = whileClosing ? state.failure : state.unusable { return .failed(failure) }
                    if state.outbound.count < Self.outboundHighWater { return .ready }
                    if Task.isCancelled { return .failed(CancellationError()) }
                    state.drainWaiters.append((token, continuation))
                    return .wait
                }
                switch outcome {
                case .wait: break
                case .ready: continuation.resume()
                case .failed(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            let waiter = self.state.withLock { MQTTConnectionState.takeWaiter(token, from: &$0.drainWaiters) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    private func publishAcknowledged(_ packet: MQTTPublishPacket) async throws {
        let token = self.state.withLock { $0.makeToken() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome {
                    case started(CheckedContinuation<Void, Never>?)
                    case queued
                    case failed(any Error)
                }
                let outcome: Outcome = self.state.withLock { state in
                    if let failure = state.unusable { return .failed(failure) }
                    if Task.isCancelled { return .failed(CancellationError()) }
                    do {
                        if state.windowQueue.isEmpty,
                            try state.startPublish(
                                packet,
                                token: token,
                                continuation: continuation,
                                maximumInFlight: self.maximumInFlight
                            )
                        {
                            return .started(state.takeWriterWaiter())
                        }
                    } catch {
                        return .failed(TransportError(.invalidArgument, "\(error)", underlying: error))
                    }
                    state.windowQueue.append(.init(token: token, packet: packet, continuation: continuation))
                    return .queued
                }
                switch outcome {
                case .started(let writer): writer?.resume()
                case .queued: break
                case .failed(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            self.cancelWaiter(token: token)
        }
    }

    package func subscribe(to filters: [TopicFilter]) async throws {
        try await self.subscribe(to: filters, qos: self.configuration.subscriptionQoS)
    }

    /// Subscribes to topic filters at a maximum QoS and waits for the SUBACK.
    ///
    /// - Throws: `TransportError` `.subscriptionRefused` if the broker answers 0x80 for any filter;
    ///   the connection's failure if it is closed or lost; `CancellationError`.
    package func subscribe(to filters: [TopicFilter], qos: QualityOfService) async throws {
        guard !filters.isEmpty else { return }
        try await self.request({ id in Self.subscribePacket(id: id, filters: filters, qos: qos) }) {
            token,
            continuation in .subscribe(count: filters.count, token: token, continuation: continuation)
        }
    }

    private static func subscribePacket(id: UInt16, filters: [TopicFilter], qos: QualityOfService) -> MQTTPacket {
        .subscribe(.init(packetID: id, subscriptions: filters.map { .init(filter: $0.rawValue, qos: MQTTQoS(qos)) }))
    }

    package func unsubscribe(from filters: [TopicFilter]) async throws {
        guard !filters.isEmpty else { return }
        try await self.request({ id in .unsubscribe(.init(packetID: id, filters: filters.map(\.rawValue))) }) {
            token,
            continuation in .unsubscribe(token: token, continuation: continuation)
        }
    }

    /// Queues a SUBSCRIBE at the configured subscription QoS and wakes the writer, without waiting
    /// for the SUBACK. Returns `false` when the outbound buffer is full or no packet identifier is
    /// free. A refusal in the SUBACK has no one to report to, as in coaty-js.
    package func subscribeWithoutWaiting(to filters: [TopicFilter]) throws -> Bool {
        guard !filters.isEmpty else { return true }
        return try self.queueWithoutWaiting { state in
            guard let id = state.allocatePacketID() else { return nil }
            state.pending[id] = .subscribe(count: filters.count, token: state.makeToken(), continuation: nil)
            return (Self.subscribePacket(id: id, filters: filters, qos: self.configuration.subscriptionQoS), id)
        }
    }

    /// Queues an UNSUBSCRIBE and wakes the writer, without waiting for the UNSUBACK. Returns `false`
    /// when the outbound buffer is full or no packet identifier is free.
    package func unsubscribeWithoutWaiting(from filters: [TopicFilter]) throws -> Bool {
        guard !filters.isEmpty else { return true }
        return try self.queueWithoutWaiting { state in
            guard let id = state.allocatePacketID() else { return nil }
            // Nobody waits for the UNSUBACK; it only frees the identifier.
            state.pending[id] = .unsubscribe(token: state.makeToken(), continuation: nil)
            return (.unsubscribe(.init(packetID: id, filters: filters.map(\.rawValue))), id)
        }
    }

    /// Sends a SUBSCRIBE or UNSUBSCRIBE and waits for its acknowledgement.
    private func request(
        _ makePacket: (UInt16) -> MQTTPacket,
        pending makePending: (UInt64, CheckedContinuation<Void, any Error>) -> MQTTConnectionState.Pending
    ) async throws {
        let token = self.state.withLock { $0.makeToken() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<CheckedContinuation<Void, Never>?, any Error> = self.state.withLock { state in
                    if let failure = state.unusable { return .failure(failure) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    guard let id = state.allocatePacketID() else {
                        return .failure(TransportError(.invalidArgument, "all 65,535 packet identifiers are in use"))
                    }
                    do {
                        try state.enqueue(makePacket(id))
                    } catch {
                        return .failure(TransportError(.invalidArgument, "\(error)", underlying: error))
                    }
                    state.pending[id] = makePending(token, continuation)
                    return .success(state.takeWriterWaiter())
                }
                switch outcome {
                case .success(let writer): writer?.resume()
                case .failure(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            self.cancelWaiter(token: token)
        }
    }

    /// Resumes a cancelled waiter; an exchange already on the wire keeps its identifier until acknowledged.
    private func cancelWaiter(token: UInt64) {
        let continuation: CheckedContinuation<Void, any Error>? = self.state.withLock { state in
            if let index = state.windowQueue.firstIndex(where: { $0.token == token }) {
                return state.windowQueue.remove(at: index).continuation
            }
            guard let (id, pending) = state.pending.first(where: { $0.value.token == token }) else { return nil }
            state.pending[id] = pending.orphaned
            return pending.continuation
        }
        continuation?.resume(throwing: CancellationError())
    }

    /// Suspends until the connection is closed or lost, or the calling task is cancelled.
    package func waitUntilClosed() async {
        let token = self.state.withLock { $0.makeToken() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let isDone = self.state.withLock { state in
                    if state.failure != nil || Task.isCancelled { return true }
                    state.closedWaiters.append((token, continuation))
                    return false
                }
                if isDone { continuation.resume() }
            }
        } onCancel: {
            let waiter = self.state.withLock { MQTTConnectionState.takeWaiter(token, from: &$0.closedWaiters) }
            waiter?.resume()
        }
    }

    // MARK: - Closing

    /// Records the first failure: closes the socket and fails everything pending.
    ///
    /// With a persistent session, what is left of it is kept in ``sessionLeft``, and a publication that
    /// stays in it fails with an error whose cause is ``MQTTPublicationKept``.
    func fail(_ error: TransportError) {
        let (waiters, kept, writer, drains, flushes, closed):
            (
                [CheckedContinuation<Void, any Error>], [CheckedContinuation<Void, any Error>],
                CheckedContinuation<Void, Never>?,
                [CheckedContinuation<Void, any Error>], [CheckedContinuation<Void, Never>],
                [(token: UInt64, continuation: CheckedContinuation<Void, Never>)]
            ) = self.state.withLock { state in
                guard state.failure == nil else { return ([], [], nil, [], [], []) }
                // After DISCONNECT the broker closes the socket: that is the expected end, not a loss.
                state.failure =
                    state.isDisconnecting ? TransportError(.connectionClosed, "the connection was closed") : error
                var waiters: [CheckedContinuation<Void, any Error>] = []
                var kept: [CheckedContinuation<Void, any Error>] = []
                for (id, pending) in state.pending {
                    guard let continuation = pending.continuation else { continue }
                    if state.sessionExchanges[id] != nil {
                        kept.append(continuation)
                    } else {
                        waiters.append(continuation)
                    }
                }
                waiters += state.windowQueue.map(\.continuation)
                if state.keepsSession {
                    state.sessionLeft = state.remainingSession()
                    state.sessionExchanges = [:]
                }
                state.pending = [:]
                state.windowQueue = []
                state.outbound = []
                defer {
                    state.drainWaiters = []
                    state.flushWaiters = []
                    state.closedWaiters = []
                }
                return (
                    waiters, kept, state.takeWriterWaiter(), state.drainWaiters.map(\.continuation), state.flushWaiters,
                    state.closedWaiters
                )
            }
        self.socket.close()
        let error = self.failure ?? error
        for waiter in waiters { waiter.resume(throwing: error) }
        if !kept.isEmpty {
            let keptError = TransportError(
                error.code,
                "\(error.message); the publication stays in the client's persistent session and is sent again "
                    + "on its next connection",
                underlying: MQTTPublicationKept(connectionFailure: error)
            )
            for waiter in kept { waiter.resume(throwing: keptError) }
        }
        for drain in drains { drain.resume(throwing: error) }
        writer?.resume()
        for flush in flushes { flush.resume() }
        for waiter in closed { waiter.continuation.resume() }
    }

    /// Queues DISCONNECT, waits (bounded) until it is written, then closes.
    func disconnect() async {
        guard self.queueDisconnect() else { return }
        let timeout = min(self.configuration.connectTimeout, .seconds(5))
        _ = try? await withTimeout(timeout, timeoutError: { CancellationError() }) {
            await self.waitForFlush()
        }
        await self.socket.shutdownOutput()
        self.fail(TransportError(.connectionClosed, "the connection was closed"))
    }

    /// Queues DISCONNECT, the last packet: nothing is queued after it [MQTT-3.14.4-1].
    ///
    /// - Returns: Whether this call queued it; `false` if the connection failed or is already
    ///   disconnecting.
    func queueDisconnect() -> Bool {
        let writer: CheckedContinuation<Void, Never>?? = self.state.withLock { state in
            guard state.failure == nil, !state.isDisconnecting else { return nil }
            state.enqueueControl(.disconnect)
            state.isDisconnecting = true
            return .some(state.takeWriterWaiter())
        }
        guard let writer else { return false }
        writer?.resume()
        return true
    }

    private func waitForFlush() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = self.state.withLock { state in
                    // The writer may have written the DISCONNECT before this task got here.
                    if state.failure != nil || state.isDisconnectWritten || Task.isCancelled { return true }
                    state.flushWaiters.append(continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            let flushes = self.state.withLock { state in
                defer { state.flushWaiters = [] }
                return state.flushWaiters
            }
            for flush in flushes { flush.resume() }
        }
    }

    // MARK: - Writer

    /// Writes queued packets until the connection fails or the task is cancelled.
    func runWriter() async {
        var batch: [UInt8] = []
        while true {
            enum Step {
                case write([CheckedContinuation<Void, any Error>])
                case wait
                case stop
            }
            let step: Step = self.state.withLock { state in
                if state.failure != nil { return .stop }
                if state.outbound.isEmpty { return .wait }
                swap(&state.outbound, &batch)
                defer { state.drainWaiters = [] }
                return .write(state.drainWaiters.map(\.continuation))
            }
            switch step {
            case .stop:
                return
            case .wait:
                if Task.isCancelled { return }
                await self.waitForOutbound()
            case .write(let drains):
                for drain in drains { drain.resume() }
                do {
                    try await self.socket.write(batch)
                } catch {
                    self.fail(self.lost(error))
                    return
                }
                let flushes: [CheckedContinuation<Void, Never>] = self.state.withLock { state in
                    state.lastSent = .now
                    guard state.isDisconnecting, state.outbound.isEmpty else { return [] }
                    state.isDisconnectWritten = true
                    defer { state.flushWaiters = [] }
                    return state.flushWaiters
                }
                for flush in flushes { flush.resume() }
                if batch.capacity > 4 * Self.outboundHighWater {
                    batch = []
                } else {
                    batch.removeAll(keepingCapacity: true)
                }
            }
        }
    }

    private func waitForOutbound() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = self.state.withLock { state in
                    if state.failure != nil || !state.outbound.isEmpty || Task.isCancelled { return true }
                    state.writerWaiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            self.state.withLock { $0.takeWriterWaiter() }?.resume()
        }
    }

    // MARK: - Reader

    /// Reads and handles packets until the connection fails or the task is cancelled.
    ///
    /// Only whole packets prove the broker alive to the keep-alive: bytes of a packet that never
    /// completes (a broker trickling one byte at a time) do not. While the outbound buffer is above
    /// ``outboundHighWater`` (acknowledgements the broker does not read), the reader stops reading, so
    /// TCP's flow control slows the broker instead of our memory growing.
    func runReader(decoder: MQTTPacketDecoder) async {
        var decoder = decoder
        do {
            while true {
                var handledAny = false
                while let packet = try decoder.next() {
                    try self.handle(packet)
                    handledAny = true
                }
                let isBacklogged = self.state.withLock { state in
                    if handledAny {
                        state.lastReceived = .now
                        state.isPingOutstanding = false
                    }
                    return state.outbound.count >= Self.outboundHighWater
                }
                if isBacklogged { try await self.waitForDrain(whileClosing: true) }
                let bytes = try await self.socket.read()
                guard !bytes.isEmpty else {
                    throw TransportError(.connectionLost, "\(self.broker) closed the connection")
                }
                decoder.append(bytes)
            }
        } catch let error as MQTTDecodingError {
            self.configuration.logger.error("malformed packet from \(self.broker): \(error)")
            self.fail(
                TransportError(.protocolViolation, "malformed packet from \(self.broker): \(error)", underlying: error)
            )
        } catch {
            self.fail(self.lost(error))
        }
    }

    /// Maps an I/O error to the connection's failure.
    private func lost(_ error: any Error) -> TransportError {
        if let error = error as? TransportError { return error }
        if error is CancellationError { return TransportError(.connectionClosed, "the connection was cancelled") }
        return TransportError(.connectionLost, "lost the connection to \(self.broker)", underlying: error)
    }

    private func violation(_ message: String) -> TransportError {
        TransportError(.protocolViolation, "protocol violation by \(self.broker): \(message)")
    }

    /// Handles one packet from the broker.
    private func handle(_ packet: MQTTPacket) throws(TransportError) {
        switch packet {
        case .publish(let publish):
            try self.receive(publish)
        case .puback(let id):
            try self.complete(id, type: .puback)
        case .pubrec(let id):
            let result: Result<CheckedContinuation<Void, Never>?, TransportError>? = self.state.withLock { state in
                switch state.pending[id] {
                case .publishAwaitingPubRec(let token, let continuation),
                    .publishAwaitingPubComp(let token, let continuation):
                    // A duplicate PUBREC gets the PUBREL again.
                    state.pending[id] = .publishAwaitingPubComp(token: token, continuation: continuation)
                    state.noteReleased(id)
                    state.enqueueControl(.pubrel(id))
                    return .success(state.takeWriterWaiter())
                case .some:
                    return .failure(self.violation("PUBREC for packet \(id), which is not a QoS 2 publication"))
                case nil:
                    return nil
                }
            }
            switch result {
            case .success(let writer): writer?.resume()
            case .failure(let error): throw error
            case nil: break
            }
        case .pubcomp(let id):
            try self.complete(id, type: .pubcomp)
        case .pubrel(let id):
            let writer = self.state.withLock { state in
                state.receivedQoS2.remove(id)
                state.enqueueControl(.pubcomp(id))
                return state.takeWriterWaiter()
            }
            writer?.resume()
        case .suback(let suback):
            try self.complete(suback.packetID, type: .suback, returnCodes: suback.returnCodes)
        case .unsuback(let id):
            try self.complete(id, type: .unsuback)
        case .pingresp:
            self.state.withLock { $0.isPingOutstanding = false }
        case .connect, .connack, .subscribe, .unsubscribe, .pingreq, .disconnect:
            throw self.violation("unexpected \(packet.type) from the broker")
        }
    }

    private func receive(_ publish: MQTTPublishPacket) throws(TransportError) {
        let message = TransportMessage(
            topic: publish.topic,
            payload: publish.payload,
            qos: publish.qos.qualityOfService,
            retain: publish.retain
        )
        // The acknowledgement is queued before the message is handed over, so that it goes out before
        // anything the receiver does in response: a receiver that closes the connection as soon as it
        // has the message queues its DISCONNECT behind the acknowledgement, instead of ahead of it
        // (where the acknowledgement was dropped, as nothing may follow a DISCONNECT [MQTT-3.14.4-1]).
        // The writer is woken after the hand-over, as before, so that it takes acknowledgements in
        // batches.
        switch publish.qos {
        case .atMostOnce:
            self.onMessage(message)
        case .atLeastOnce:
            guard let id = publish.packetID else { throw self.violation("QoS 1 PUBLISH without identifier") }
            let writer = self.state.withLock { state in
                state.enqueueControl(.puback(id))
                return state.takeWriterWaiter()
            }
            self.onMessage(message)
            writer?.resume()
        case .exactlyOnce:
            guard let id = publish.packetID else { throw self.violation("QoS 2 PUBLISH without identifier") }
            let (isNew, writer) = self.state.withLock { state in
                // Not after a failure: the persistent session's receipts were taken then.
                let isNew = state.failure == nil && state.receivedQoS2.insert(id).inserted
                state.enqueueControl(.pubrec(id))
                return (isNew, state.takeWriterWaiter())
            }
            if isNew { self.onMessage(message) }
            writer?.resume()
        }
    }

    /// Completes the exchange `id` on its final acknowledgement.
    private func complete(
        _ id: UInt16,
        type: MQTTPacketType,
        returnCodes: [MQTTSubAckReturnCode] = []
    ) throws(TransportError) {
        enum Outcome {
            case none
            case success(CheckedContinuation<Void, any Error>?)
            case refused(CheckedContinuation<Void, any Error>?, TransportError)
            case violation(TransportError)
        }
        var failedQueued: [(CheckedContinuation<Void, any Error>, any Error)] = []
        var writer: CheckedContinuation<Void, Never>?
        let outcome: Outcome = self.state.withLock { state in
            guard let pending = state.pending[id] else { return .none }  // unsolicited: ignored
            let matches: Bool
            switch (pending, type) {
            case (.publishAwaitingPubAck, .puback), (.publishAwaitingPubComp, .pubcomp), (.subscribe, .suback),
                (.unsubscribe, .unsuback):
                matches = true
            case (.publishAwaitingPubRec, .pubcomp):
                return .violation(self.violation("PUBCOMP for packet \(id) before PUBREC"))
            default:
                matches = false
            }
            guard matches else {
                return .violation(self.violation("\(type) for packet \(id), which awaits a different acknowledgement"))
            }
            if case .subscribe(let count, _, _) = pending, count != returnCodes.count {
                return .violation(
                    self.violation("SUBACK with \(returnCodes.count) return codes for \(count) topic filters")
                )
            }
            state.pending[id] = nil
            if pending.isPublish {
                if state.keepsSession { state.sessionExchanges[id] = nil }
                failedQueued = state.releasePublishSlot(maximumInFlight: self.maximumInFlight)
                writer = state.takeWriterWaiter()
            }
            if returnCodes.contains(.failure) {
                return .refused(
                    pending.continuation,
                    TransportError(.subscriptionRefused, "the broker refused a subscription (SUBACK 0x80)")
                )
            }
            return .success(pending.continuation)
        }
        writer?.resume()
        for (continuation, error) in failedQueued { continuation.resume(throwing: error) }
        switch outcome {
        case .none: break
        case .success(let continuation): continuation?.resume()
        case .refused(let continuation, let error): continuation?.resume(throwing: error)
        case .violation(let error): throw error
        }
    }

    // MARK: - Keep-alive

    /// Sends PINGREQ after half a keep-alive without traffic in either direction, and fails the
    /// connection when no whole packet has been received for a whole keep-alive while a PINGREQ is
    /// outstanding. A dead link is therefore noticed one keep-alive after the last packet received,
    /// within the 1½ × keep-alive the standard gives the broker [MQTT-3.1.2-24]. The loop sleeps until
    /// the next instant at which it has something to do.
    func runKeepAlive() async {
        let seconds = self.configuration.keepAliveSeconds
        guard seconds > 0 else { return }
        let keepAlive = Duration.seconds(Int(seconds))
        while true {
            enum Step {
                case sleep(until: ContinuousClock.Instant)
                case ping(CheckedContinuation<Void, Never>?)
                case dead
                case stop
            }
            let now = ContinuousClock.now
            let step: Step = self.state.withLock { state in
                if state.failure != nil { return .stop }
                if state.isPingOutstanding {
                    let deadline = state.lastReceived + keepAlive
                    return now >= deadline ? .dead : .sleep(until: deadline)
                }
                let pingAt = min(state.lastReceived, state.lastSent) + keepAlive / 2
                guard now >= pingAt else { return .sleep(until: pingAt) }
                state.isPingOutstanding = true
                state.enqueueControl(.pingreq)
                return .ping(state.takeWriterWaiter())
            }
            switch step {
            case .sleep(let deadline):
                do {
                    try await Task.sleep(until: deadline, clock: .continuous)
                } catch {
                    return
                }
            case .ping(let writer):
                writer?.resume()
            case .stop:
                return
            case .dead:
                self.configuration.logger.warning("no PINGRESP from \(self.broker) within the keep-alive")
                self.fail(
                    TransportError(
                        .connectionLost,
                        "no PINGRESP from \(self.broker) within the keep-alive of \(seconds) s"
                    )
                )
                return
            }
        }
    }

    // MARK: - Acknowledgement watchdog

    /// Fails the connection when an exchange (SUBSCRIBE, UNSUBSCRIBE, QoS 1/2 PUBLISH) stays
    /// unacknowledged for ``MQTTTransport/Configuration/acknowledgementTimeout``.
    ///
    /// Every half timeout the loop notes the exchanges outstanding; one still outstanding two looks
    /// later has waited at least the whole timeout, so it is noticed within 1½ times it. Exchanges are
    /// told apart by their tokens, which are never reused, so a packet identifier used again meanwhile
    /// does not count as old. The publish path pays nothing for this: no clock is read per exchange.
    func runAcknowledgementWatchdog() async {
        guard let timeout = self.configuration.acknowledgementTimeout, timeout > .zero else { return }
        var older: Set<UInt64> = []
        var previous: Set<UInt64> = []
        while true {
            do {
                try await Task.sleep(for: timeout / 2)
            } catch {
                return
            }
            enum Look {
                case stop
                case outstanding(Set<UInt64>)
                case overdue(UInt16, MQTTConnectionState.Pending)
            }
            let look: Look = self.state.withLock { state in
                if state.failure != nil { return .stop }
                var outstanding = Set<UInt64>(minimumCapacity: state.pending.count)
                for (id, pending) in state.pending {
                    if older.contains(pending.token) { return .overdue(id, pending) }
                    outstanding.insert(pending.token)
                }
                return .outstanding(outstanding)
            }
            switch look {
            case .stop:
                return
            case .outstanding(let outstanding):
                older = previous
                previous = outstanding
            case .overdue(let id, let pending):
                let message =
                    "no \(pending.awaitedAcknowledgement) for packet \(id) from \(self.broker) within \(timeout)"
                self.configuration.logger.warning("\(message)")
                self.fail(TransportError(.connectionLost, message))
                return
            }
        }
    }
}
