import CoatyMQTTPackets
import CoatyTransport

/// The mutable state of one MQTT connection: outbound buffer, packet identifiers, in-flight
/// exchanges and keep-alive bookkeeping. Kept behind the connection's `Mutex`; no I/O here.
struct MQTTConnectionState {
    /// A request awaiting its acknowledgement, keyed by packet identifier.
    enum Pending {
        /// A QoS 1 PUBLISH awaiting PUBACK.
        case publishAwaitingPubAck(token: UInt64, continuation: CheckedContinuation<Void, any Error>?)
        /// A QoS 2 PUBLISH awaiting PUBREC.
        case publishAwaitingPubRec(token: UInt64, continuation: CheckedContinuation<Void, any Error>?)
        /// A QoS 2 PUBLISH whose PUBREL was sent, awaiting PUBCOMP.
        case publishAwaitingPubComp(token: UInt64, continuation: CheckedContinuation<Void, any Error>?)
        /// A SUBSCRIBE awaiting SUBACK with this many return codes.
        case subscribe(count: Int, token: UInt64, continuation: CheckedContinuation<Void, any Error>?)
        /// An UNSUBSCRIBE awaiting UNSUBACK.
        case unsubscribe(token: UInt64, continuation: CheckedContinuation<Void, any Error>?)

        var token: UInt64 {
            switch self {
            case .publishAwaitingPubAck(let token, _), .publishAwaitingPubRec(let token, _),
                .publishAwaitingPubComp(let token, _), .subscribe(_, let token, _), .unsubscribe(let token, _):
                token
            }
        }

        var continuation: CheckedContinuation<Void, any Error>? {
            switch self {
            case .publishAwaitingPubAck(_, let continuation), .publishAwaitingPubRec(_, let continuation),
                .publishAwaitingPubComp(_, let continuation), .subscribe(_, _, let continuation),
                .unsubscribe(_, let continuation):
                continuation
            }
        }

        /// The packet this exchange waits for, for messages.
        var awaitedAcknowledgement: String {
            switch self {
            case .publishAwaitingPubAck: "PUBACK"
            case .publishAwaitingPubRec: "PUBREC"
            case .publishAwaitingPubComp: "PUBCOMP"
            case .subscribe: "SUBACK"
            case .unsubscribe: "UNSUBACK"
            }
        }

        var isPublish: Bool {
            switch self {
            case .publishAwaitingPubAck, .publishAwaitingPubRec, .publishAwaitingPubComp: true
            case .subscribe, .unsubscribe: false
            }
        }

        /// The same exchange without a waiting task (after the waiter was cancelled).
        var orphaned: Pending {
            switch self {
            case .publishAwaitingPubAck(let token, _): .publishAwaitingPubAck(token: token, continuation: nil)
            case .publishAwaitingPubRec(let token, _): .publishAwaitingPubRec(token: token, continuation: nil)
            case .publishAwaitingPubComp(let token, _): .publishAwaitingPubComp(token: token, continuation: nil)
            case .subscribe(let count, let token, _): .subscribe(count: count, token: token, continuation: nil)
            case .unsubscribe(let token, _): .unsubscribe(token: token, continuation: nil)
            }
        }
    }

    /// A QoS 1/2 publication waiting for a free in-flight slot.
    struct QueuedPublish {
        var token: UInt64
        var packet: MQTTPublishPacket
        var continuation: CheckedContinuation<Void, any Error>
    }

    /// Set once the connection has failed or closed; every later operation throws it.
    var failure: TransportError?
    /// Whether a graceful DISCONNECT has been queued. Nothing is queued after it: a client sends no
    /// packet after DISCONNECT [MQTT-3.14.4-1], so acknowledgements and PINGREQs are dropped, and new
    /// publications and requests fail (``unusable``).
    var isDisconnecting = false
    /// Whether the writer has written everything up to and including the DISCONNECT.
    var isDisconnectWritten = false
    /// Encoded packets not yet taken by the writer.
    var outbound: [UInt8] = []
    var writerWaiter: CheckedContinuation<Void, Never>?
    var drainWaiters: [(token: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    var flushWaiters: [CheckedContinuation<Void, Never>] = []
    var closedWaiters: [(token: UInt64, continuation: CheckedContinuation<Void, Never>)] = []

    var pending: [UInt16: Pending] = [:]
    var publishesInFlight = 0
    var windowQueue: [QueuedPublish] = []
    private var lastPacketID: UInt16 = 0
    var nextToken: UInt64 = 0
    /// Identifiers of QoS 2 PUBLISHes received and delivered, awaiting PUBREL [MQTT-4.3.3-2].
    var receivedQoS2: Set<UInt16> = []

    /// Whether the connection keeps a persistent session (clean session 0), whose outbound exchanges
    /// are recorded in ``sessionExchanges`` so that they outlive the connection.
    let keepsSession: Bool
    /// With a persistent session: the outbound exchanges that are session state, by packet identifier,
    /// with the order in which they were first sent. Always empty with a clean session, so the
    /// default case pays one branch per exchange for this.
    var sessionExchanges: [UInt16: (order: UInt64, exchange: MQTTSessionState.Exchange)] = [:]
    private var nextExchangeOrder: UInt64 = 0
    /// With a persistent session: what is left of it once the connection has ended.
    var sessionLeft = MQTTSessionState()

    var lastSent: ContinuousClock.Instant
    var lastReceived: ContinuousClock.Instant
    var isPingOutstanding = false

    init(now: ContinuousClock.Instant, keepsSession: Bool) {
        self.lastSent = now
        self.lastReceived = now
        self.keepsSession = keepsSession
    }

    /// Why the connection takes no new publication or request: its failure, or a DISCONNECT queued.
    var unusable: TransportError? {
        if let failure = self.failure { return failure }
        return self.isDisconnecting ? TransportError(.connectionClosed, "the connection is closing") : nil
    }

    /// Removes the waiter with `token` from `waiters` and returns its continuation, or `nil` if it no
    /// longer waits; a cancelled wait resumes what this returns.
    static func takeWaiter<Continuation>(
        _ token: UInt64,
        from waiters: inout [(token: UInt64, continuation: Continuation)]
    ) -> Continuation? {
        guard let index = waiters.firstIndex(where: { $0.token == token }) else { return nil }
        return waiters.remove(at: index).continuation
    }

    mutating func makeToken() -> UInt64 {
        self.nextToken &+= 1
        return self.nextToken
    }

    /// The next identifier not in use, skipping 0 on wrap [MQTT-2.3.1-2]; `nil` if all 65,535 are taken.
    mutating func allocatePacketID() -> UInt16? {
        guard self.pending.count < Int(UInt16.max) else { return nil }
        var candidate = self.lastPacketID
        while true {
            candidate = candidate == UInt16.max ? 1 : candidate + 1
            if self.pending[candidate] == nil {
                self.lastPacketID = candidate
                return candidate
            }
        }
    }

    /// Appends an encoded packet to the outbound buffer, leaving it unchanged if encoding fails; after
    /// DISCONNECT, appends nothing.
    mutating func enqueue(_ packet: MQTTPacket) throws(MQTTEncodingError) {
        guard !self.isDisconnecting else { return }
        let mark = self.outbound.count
        do {
            try packet.encode(into: &self.outbound)
        } catch {
            self.outbound.removeSubrange(mark...)
            throw error
        }
    }

    /// Appends a packet that cannot fail to encode (acknowledgements, PINGREQ, DISCONNECT).
    mutating func enqueueControl(_ packet: MQTTPacket) {
        try? self.enqueue(packet)
    }

    /// Takes the writer's continuation so the caller can wake it after releasing the lock.
    mutating func takeWriterWaiter() -> CheckedContinuation<Void, Never>? {
        defer { self.writerWaiter = nil }
        return self.writerWaiter
    }

    /// Registers a QoS 1/2 publication and queues its PUBLISH; `false` if the window is full.
    mutating func startPublish(
        _ packet: MQTTPublishPacket,
        token: UInt64,
        continuation: CheckedContinuation<Void, any Error>,
        maximumInFlight: Int
    ) throws(MQTTEncodingError) -> Bool {
        guard !self.isDisconnecting, self.publishesInFlight < maximumInFlight, let id = self.allocatePacketID()
        else { return false }
        var packet = packet
        packet.packetID = id
        try self.send(packet, id: id, token: token, continuation: continuation)
        return true
    }

    /// Queues a QoS 1/2 PUBLISH that has its identifier `id` and puts it in flight, awaiting its first
    /// acknowledgement (and, with a persistent session, in the session).
    private mutating func send(
        _ packet: MQTTPublishPacket,
        id: UInt16,
        token: UInt64,
        continuation: CheckedContinuation<Void, any Error>?
    ) throws(MQTTEncodingError) {
        try self.enqueue(.publish(packet))
        self.publishesInFlight += 1
        self.pending[id] =
            packet.qos == .exactlyOnce
            ? .publishAwaitingPubRec(token: token, continuation: continuation)
            : .publishAwaitingPubAck(token: token, continuation: continuation)
        if self.keepsSession { self.recordExchange(.publish(packet)) }
    }

    // MARK: Persistent session

    /// Records an outbound exchange of the persistent session, in the order first sent.
    mutating func recordExchange(_ exchange: MQTTSessionState.Exchange) {
        self.nextExchangeOrder += 1
        self.sessionExchanges[exchange.packetID] = (self.nextExchangeOrder, exchange)
    }

    /// Notes that a QoS 2 message got its PUBREC: from now on the session keeps only its PUBREL.
    mutating func noteReleased(_ id: UInt16) {
        guard self.keepsSession, let entry = self.sessionExchanges[id] else { return }
        self.sessionExchanges[id] = (entry.order, .release(id))
    }

    /// Queues the exchanges of a session resumed on this connection, ahead of anything new: the
    /// PUBLISHes again with DUP set and their identifiers, the PUBRELs again [MQTT-4.4.0-1]. Their
    /// callers belong to the earlier connection, so nobody waits for them here; they take in-flight
    /// slots until acknowledged, so new publications queue behind them.
    mutating func resume(_ session: MQTTSessionState) {
        for exchange in session.outbound {
            let id = exchange.packetID
            switch exchange {
            case .publish(var packet):
                packet.dup = true
                // It was encoded once already, so it encodes again.
                try? self.send(packet, id: id, token: self.makeToken(), continuation: nil)
            case .release:
                self.enqueueControl(.pubrel(id))
                self.publishesInFlight += 1
                self.pending[id] = .publishAwaitingPubComp(token: self.makeToken(), continuation: nil)
                self.recordExchange(exchange)
            }
            self.lastPacketID = id
        }
        self.receivedQoS2 = session.receivedQoS2
    }

    /// The session's state as the connection ends: what it still has to send again, in order.
    func remainingSession() -> MQTTSessionState {
        MQTTSessionState(
            outbound: self.sessionExchanges.values.sorted { $0.order < $1.order }.map(\.exchange),
            receivedQoS2: self.receivedQoS2
        )
    }

    /// Frees a publication's slot and starts queued publications that now fit.
    ///
    /// - Returns: Continuations to resume with an error (queued publications that failed to encode).
    mutating func releasePublishSlot(maximumInFlight: Int) -> [(CheckedContinuation<Void, any Error>, any Error)] {
        self.publishesInFlight -= 1
        var failed: [(CheckedContinuation<Void, any Error>, any Error)] = []
        while !self.windowQueue.isEmpty, self.publishesInFlight < maximumInFlight {
            let next = self.windowQueue.removeFirst()
            do {
                guard
                    try self.startPublish(
                        next.packet,
                        token: next.token,
                        continuation: next.continuation,
                        maximumInFlight: maximumInFlight
                    )
                else {
                    self.windowQueue.insert(next, at: 0)
                    break
                }
            } catch {
                failed.append((next.continuation, TransportError(.invalidArgument, "\(error)", underlying: error)))
            }
        }
        return failed
    }
}
