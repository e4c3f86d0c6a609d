import CoatyCore
import CoatyMQTTPackets
import CoatyTransport

/// The client side of one MQTT 3.1.1 connection as a pure state machine: packet identifiers, QoS 1/2
/// exchanges in flight and the in-flight window, a persistent session's resends, keep-alive bookkeeping,
/// the outbound buffer and the connection's phase. It does no I/O and holds no continuations: each
/// method takes one event and returns what the shell (``MQTTConnection``) must do, naming waiting tasks
/// by their `WaiterToken`. Times are durations since the shell's clock reference.
///
/// ## Phases
///
/// ```
///             CONNACK accepted                disconnect()
/// handshaking ───────────────────▶ connected ─────────────▶ closing
///      │                               │                       │
///      │ refused, violation, fail()    │ fail() (I/O error,    │ fail() (the broker closes the
///      ▼                               ▼ violation, timeouts)  ▼ socket, or the flush timed out)
///    closed ◀────────────────────── closed ◀──────────────── closed (.connectionClosed)
/// ```
///
/// - **handshaking**: CONNECT written or being written, awaiting CONNACK. Nothing else may be queued.
/// - **connected**: the ``Link`` carries the outbound buffer, the exchanges in flight, the window queue,
///   the session and keep-alive times. Publications and requests are encoded into the outbound buffer,
///   which the writer takes whole; received packets complete exchanges and queue acknowledgements.
/// - **closing**: DISCONNECT is queued, and nothing is queued after it [MQTT-3.14.4-1]: new work fails,
///   acknowledgements and PINGREQs are dropped, received packets are still handled. The writer drains the
///   buffer; once the DISCONNECT is written, flush waiters are resumed.
/// - **closed**: the first failure is kept. Every waiter was resumed: exchanges and window publications
///   with the failure (or, for a publication the persistent session keeps, with an error caused by
///   ``MQTTPublicationKept``), drain waiters with the failure, the writer, flush and closed waiters with
///   success. With a persistent session, what is left of it is kept for the next connection.
///
/// A waiter whose task is cancelled is forgotten through ``cancel(_:)``; an exchange already on the wire
/// keeps its packet identifier until acknowledged.
struct MQTTClientStateMachine: Sendable {
    /// The phase of the connection, carrying the data that exists in that phase.
    enum Phase: Sendable {
        case handshaking(Handshake)
        case connected(Link)
        case closing(Link, Closing)
        case closed(Closed)
        /// Only while a method mutates a phase's data in place.
        case modifying
    }

    /// Above this many queued outbound bytes, publishers wait for the writer (backpressure), and so does
    /// the reader, whose packets queue acknowledgements: a broker that floods QoS 1 PUBLISHes and never
    /// reads our PUBACKs would otherwise grow the buffer without bound (4 bytes a message).
    static let outboundHighWater = 1 << 20
    /// The most storage a writer's emptied batch keeps for the next one; a burst's larger batch is
    /// let go.
    static let largestKeptBatch = 4 * outboundHighWater

    /// The broker, for messages.
    let broker: MQTTBrokerAddress
    /// Whether the connection keeps a persistent session (clean session 0).
    let keepsSession: Bool
    /// How many QoS 1/2 publications may await acknowledgement at once.
    let maximumInFlight: Int
    /// The keep-alive interval; `.zero` turns keep-alive off.
    let keepAlive: Duration
    /// How long an exchange may stay unacknowledged; `nil` for ever.
    let acknowledgementTimeout: Duration?

    private(set) var phase: Phase = .handshaking(Handshake())

    init(
        broker: MQTTBrokerAddress,
        keepsSession: Bool = false,
        maximumInFlight: Int = 64,
        keepAlive: Duration = .zero,
        acknowledgementTimeout: Duration? = nil
    ) {
        self.broker = broker
        self.keepsSession = keepsSession
        self.maximumInFlight = max(1, maximumInFlight)
        self.keepAlive = keepAlive
        self.acknowledgementTimeout = acknowledgementTimeout
    }

    // MARK: - Queries

    /// The failure that ended the connection, if it has ended.
    var failure: TransportError? {
        guard case .closed(let closed) = self.phase else { return nil }
        return closed.failure
    }

    /// With a persistent session: what is left of it once the connection has ended (empty before).
    var sessionLeft: MQTTSessionState {
        guard case .closed(let closed) = self.phase else { return MQTTSessionState() }
        return closed.sessionLeft
    }

    /// Why the connection takes no new publication or request, or `nil` if it does.
    private var unusable: TransportError? {
        switch self.phase {
        case .connected: nil
        case .handshaking: TransportError(.connectionClosed, "the connection to \(self.broker) is not open yet")
        case .closing: TransportError(.connectionClosed, "the connection is closing")
        case .closed(let closed): closed.failure
        case .modifying: preconditionFailure("MQTTClientStateMachine re-entered")
        }
    }

    /// Runs `body` on the link of a connected (and, if `whileClosing`, of a closing) connection, in place;
    /// `nil` in other phases. `body` learns whether the connection is closing.
    mutating func withLink<Result>(
        whileClosing: Bool = true,
        _ body: (inout Link, _ isClosing: Bool) -> Result
    ) -> Result? {
        switch self.phase {
        case .connected(var link):
            // The phase lets go of the link while it is mutated, so its buffers are not copied.
            self.phase = .modifying
            defer { self.phase = .connected(link) }
            return body(&link, false)
        case .closing(var link, let closing):
            guard whileClosing else { return nil }
            self.phase = .modifying
            defer { self.phase = .closing(link, closing) }
            return body(&link, true)
        case .handshaking, .closed:
            return nil
        case .modifying:
            preconditionFailure("MQTTClientStateMachine re-entered")
        }
    }

    // MARK: - Handshake

    /// The CONNECT has been written.
    mutating func connectWritten(at now: Duration) {
        guard case .handshaking(var handshake) = self.phase else { return }
        handshake.connectSent = now
        self.phase = .handshaking(handshake)
    }

    /// The broker's first packet, which must be a CONNACK.
    mutating func handshakeReceived(_ packet: MQTTPacket, at now: Duration) -> HandshakeAction {
        guard case .handshaking(let handshake) = self.phase else {
            let error = TransportError(.protocolViolation, "protocol violation by \(self.broker): a second CONNACK")
            return .failed(Closure(failure: self.failure ?? error, resumptions: []))
        }
        let error: TransportError
        switch packet {
        case .connack(let connack) where connack.returnCode == .accepted:
            self.phase = .connected(
                Link(closedWaiters: handshake.closedWaiters, lastSent: handshake.connectSent ?? now, lastReceived: now)
            )
            return .accepted(sessionPresent: connack.sessionPresent)
        case .connack(let connack):
            error = TransportError(
                .connectionRefused,
                "the broker refused the connection: \(connack.returnCode.reason) (\(connack.returnCode), "
                    + "return code \(connack.returnCode.rawValue))"
            )
        default:
            error = TransportError(.protocolViolation, "the broker sent \(packet.type) before CONNACK")
        }
        return .failed(self.fail(error)!)
    }

    // MARK: - Outbound

    /// A QoS 0 publication: queued unless the outbound buffer is full.
    mutating func publishAtMostOnce(_ packet: MQTTPublishPacket) -> EnqueueAction {
        let action = self.withLink(whileClosing: false) { link, _ -> EnqueueAction in
            guard link.outbound.count < Self.outboundHighWater else { return .full }
            do {
                try link.enqueue(.publish(packet))
            } catch {
                return .failed(TransportError(.invalidArgument, "\(error)", underlying: error))
            }
            return .queued(wakeWriter: link.takeWriter())
        }
        return action ?? .failed(self.unusable!)
    }

    /// A QoS 1/2 publication whose task waits with `waiter` until it is acknowledged: sent if the
    /// in-flight window has room and nothing waits before it, otherwise queued for the window.
    mutating func publish(_ packet: MQTTPublishPacket, waiter: WaiterToken) -> EnqueueAction {
        let (maximumInFlight, keepsSession) = (self.maximumInFlight, self.keepsSession)
        let action = self.withLink(whileClosing: false) { link, _ -> EnqueueAction in
            do {
                if link.window.isEmpty,
                    try link.start(packet, waiter: waiter, maximumInFlight: maximumInFlight, keepsSession: keepsSession)
                {
                    return .queued(wakeWriter: link.takeWriter())
                }
            } catch {
                return .failed(TransportError(.invalidArgument, "\(error)", underlying: error))
            }
            link.window.append(WindowedPublication(waiter: waiter, packet: packet))
            return .waitingForWindow
        }
        return action ?? .failed(self.unusable!)
    }

    /// A SUBSCRIBE. With a `waiter`, it is resumed on the SUBACK (with `.subscriptionRefused` if the
    /// broker refused a filter). Without, the request is not queued (``EnqueueAction/full``) when the
    /// outbound buffer is full or no packet identifier is free, and a refusal has nobody to report to.
    mutating func subscribe(to filters: [TopicFilter], qos: MQTTQoS, waiter: WaiterToken?) -> EnqueueAction {
        self.request(.awaitingSubAck(filterCount: filters.count), waiter: waiter) { id in
            .subscribe(.init(packetID: id, subscriptions: filters.map { .init(filter: $0.rawValue, qos: qos) }))
        }
    }

    /// An UNSUBSCRIBE, with or without a waiter (as ``subscribe(to:qos:waiter:)``).
    mutating func unsubscribe(from filters: [TopicFilter], waiter: WaiterToken?) -> EnqueueAction {
        self.request(.awaitingUnsubAck, waiter: waiter) { id in
            .unsubscribe(.init(packetID: id, filters: filters.map(\.rawValue)))
        }
    }

    private mutating func request(
        _ stage: Exchange.Stage,
        waiter: WaiterToken?,
        packet makePacket: (UInt16) -> MQTTPacket
    ) -> EnqueueAction {
        let action = self.withLink(whileClosing: false) { link, _ -> EnqueueAction in
            if waiter == nil, link.outbound.count >= Self.outboundHighWater { return .full }
            guard let id = link.allocatePacketID() else {
                guard waiter != nil else { return .full }
                return .failed(TransportError(.invalidArgument, "all 65,535 packet identifiers are in use"))
            }
            do {
                try link.enqueue(makePacket(id))
            } catch {
                return .failed(TransportError(.invalidArgument, "\(error)", underlying: error))
            }
            link.track(id, stage: stage, waiter: waiter)
            return .queued(wakeWriter: link.takeWriter())
        }
        return action ?? .failed(self.unusable!)
    }

    /// Registers a task that waits until the outbound buffer is below the high-water mark.
    ///
    /// A publisher waits only while the connection is connected. The reader (`whileClosing`) waits on
    /// while a DISCONNECT is queued too: the writer is still to send it, and failing the connection
    /// would drop it, with the messages queued before it, and make the broker publish the will.
    mutating func waitForDrain(_ token: WaiterToken, whileClosing: Bool = false) -> WaitAction {
        let action = self.withLink(whileClosing: whileClosing) { link, _ -> WaitAction in
            guard link.outbound.count >= Self.outboundHighWater else { return .ready }
            link.drainWaiters.append(token)
            return .wait
        }
        return action ?? .failed(self.unusable!)
    }

    /// Registers a task that waits until the connection has closed.
    mutating func waitUntilClosed(_ token: WaiterToken) -> WaitAction {
        switch self.phase {
        case .handshaking(var handshake):
            handshake.closedWaiters.append(token)
            self.phase = .handshaking(handshake)
            return .wait
        case .connected, .closing:
            self.withLink { link, _ in link.closedWaiters.append(token) }
            return .wait
        case .closed:
            return .ready
        case .modifying:
            preconditionFailure("MQTTClientStateMachine re-entered")
        }
    }

    /// Forgets a waiter whose task was cancelled: a publication waiting for the window is dropped; an
    /// exchange on the wire stays in flight without a waiter, keeping its packet identifier until it
    /// is acknowledged. Unknown tokens (already resumed) are ignored.
    mutating func cancel(_ token: WaiterToken) {
        switch self.phase {
        case .handshaking(var handshake):
            handshake.closedWaiters.removeAll { $0 == token }
            self.phase = .handshaking(handshake)
        case .connected, .closing:
            self.withLink { link, _ in
                if let index = link.window.firstIndex(where: { $0.waiter == token }) {
                    link.window.remove(at: index)
                } else if let (id, _) = link.exchanges.first(where: { $0.value.waiter == token }) {
                    link.exchanges[id]?.waiter = nil
                } else {
                    link.drainWaiters.removeAll { $0 == token }
                    link.closedWaiters.removeAll { $0 == token }
                    if link.writer == token { link.writer = nil }
                }
            }
            if case .closing(let link, var closing) = self.phase {
                self.phase = .modifying
                closing.flushWaiters.removeAll { $0 == token }
                self.phase = .closing(link, closing)
            }
        case .closed:
            break
        case .modifying:
            preconditionFailure("MQTTClientStateMachine re-entered")
        }
    }

    // MARK: - Writer

    /// A task starts handing over packets without waiting that should leave in one write (a request's
    /// SUBSCRIBE and its PUBLISH): until the matching ``releaseWriter()``, queueing does not wake the
    /// writer, so it cannot take the first packet alone. The hold spans synchronous code only.
    mutating func holdWriter() {
        self.withLink { link, _ in link.writerHolds += 1 }
    }

    /// Ends a hold.
    ///
    /// - Returns: The writer to wake: the last hold ended, packets are queued and the writer waits.
    mutating func releaseWriter() -> WaiterToken? {
        let writer = self.withLink { link, _ -> WaiterToken? in
            link.writerHolds = max(0, link.writerHolds - 1)
            return link.outbound.isEmpty ? nil : link.takeWriter()
        }
        return writer ?? nil
    }

    /// The writer takes everything queued, swapping it with its (empty) `batch`; the drain waiters are
    /// resumed, as the buffer is empty now.
    ///
    /// With nothing queued, an emptied `batch` with more room than the buffer (and at most
    /// ``largestKeptBatch``) takes the buffer's place: a task that sent directly
    /// (`MQTTConnection.wake(_:)`) held its batch for one send only, and leaves its storage to the
    /// next packets queued instead of having the first of them allocate a buffer.
    mutating func takeOutbound(swapping batch: inout [UInt8]) -> WriterAction {
        let action = self.withLink { link, _ -> WriterAction in
            if link.outbound.isEmpty {
                if batch.isEmpty, batch.capacity > link.outbound.capacity, batch.capacity <= Self.largestKeptBatch {
                    swap(&link.outbound, &batch)
                }
                return .idle
            }
            swap(&link.outbound, &batch)
            defer { link.drainWaiters = [] }
            return .write(drained: link.drainWaiters)
        }
        return action ?? .stop
    }

    /// The writer found nothing queued and waits with `token`; ``WaitAction/ready`` if something was
    /// queued (or the connection closed) since it looked.
    mutating func writerWaits(_ token: WaiterToken) -> WaitAction {
        let action = self.withLink { link, _ -> WaitAction in
            if !link.outbound.isEmpty { return .ready }
            link.writer = token
            return .wait
        }
        return action ?? .ready
    }

    /// The writer wrote a batch.
    ///
    /// - Returns: Flush waiters to resume: the DISCONNECT has been written.
    mutating func written(at now: Duration) -> [WaiterToken] {
        switch self.phase {
        case .connected:
            self.withLink { link, _ in link.lastSent = now }
            return []
        case .closing(var link, var closing):
            self.phase = .modifying
            link.lastSent = now
            var flushed: [WaiterToken] = []
            if link.outbound.isEmpty {
                closing.isDisconnectWritten = true
                swap(&flushed, &closing.flushWaiters)
            }
            self.phase = .closing(link, closing)
            return flushed
        case .handshaking, .closed:
            return []
        case .modifying:
            preconditionFailure("MQTTClientStateMachine re-entered")
        }
    }

    // MARK: - Closing

    /// Queues DISCONNECT, the last packet: nothing is queued after it [MQTT-3.14.4-1].
    ///
    /// - Returns: ``EnqueueAction/queued(wakeWriter:)``, or ``EnqueueAction/failed(_:)`` if the
    ///   connection is not connected (already closing, closed, or still in its handshake).
    mutating func disconnect() -> EnqueueAction {
        guard case .connected(var link) = self.phase else { return .failed(self.unusable!) }
        self.phase = .modifying
        link.enqueueControl(.disconnect)
        let writer = link.takeWriter()
        self.phase = .closing(link, Closing())
        return .queued(wakeWriter: writer)
    }

    /// Registers a task that waits until the DISCONNECT has been written.
    mutating func waitForFlush(_ token: WaiterToken) -> WaitAction {
        guard case .closing(let link, var closing) = self.phase, !closing.isDisconnectWritten else { return .ready }
        self.phase = .modifying
        closing.flushWaiters.append(token)
        self.phase = .closing(link, closing)
        return .wait
    }

    /// Records the first failure and closes the connection; `nil` if it has closed already.
    ///
    /// After a DISCONNECT the broker closes the socket: that is the expected end, so a closing
    /// connection closes with `.connectionClosed` whatever the error.
    mutating func fail(_ error: TransportError) -> Closure? {
        switch self.phase {
        case .handshaking(let handshake):
            self.phase = .closed(Closed(failure: error, sessionLeft: MQTTSessionState()))
            return Closure(
                failure: error,
                resumptions: handshake.closedWaiters.map { .init(token: $0, result: .success(())) }
            )
        case .connected(let link):
            return self.close(link, closing: nil, failure: error)
        case .closing(let link, let closing):
            return self.close(
                link,
                closing: closing,
                failure: TransportError(.connectionClosed, "the connection was closed")
            )
        case .closed:
            return nil
        case .modifying:
            preconditionFailure("MQTTClientStateMachine re-entered")
        }
    }

    private mutating func close(_ link: Link, closing: Closing?, failure: TransportError) -> Closure {
        var resumptions: [Resumption] = []
        var kept: TransportError?
        for (id, exchange) in link.exchanges {
            guard let waiter = exchange.waiter else { continue }
            if link.session[id] != nil {
                kept =
                    kept
                    ?? TransportError(
                        failure.code,
                        "\(failure.message); the publication stays in the client's persistent session and is sent "
                            + "again on its next connection",
                        underlying: MQTTPublicationKept(connectionFailure: failure)
                    )
                resumptions.append(Resumption(token: waiter, result: .failure(kept!)))
            } else {
                resumptions.append(Resumption(token: waiter, result: .failure(failure)))
            }
        }
        resumptions += link.window.map { Resumption(token: $0.waiter, result: .failure(failure)) }
        resumptions += link.drainWaiters.map { Resumption(token: $0, result: .failure(failure)) }
        var woken = link.writer.map { [$0] } ?? []
        woken += closing?.flushWaiters ?? []
        woken += link.closedWaiters
        resumptions += woken.map { Resumption(token: $0, result: .success(())) }
        let sessionLeft = self.keepsSession ? link.remainingSession() : MQTTSessionState()
        self.phase = .closed(Closed(failure: failure, sessionLeft: sessionLeft))
        return Closure(failure: failure, resumptions: resumptions)
    }
}
