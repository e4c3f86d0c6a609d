// fuzz-modules: CoatyCore CoatyMQTTPackets CoatySockets CoatyWebSocket CoatyTLS CoatyBroker
// fuzz-options: -max_len=2048
//
// libFuzzer harness for the broker's per-connection packet handling, compiled into the CoatyBroker
// module by Scripts/fuzz.sh. Each input runs one broker (bound to a loopback port that no client ever
// connects to) with small limits chosen by the first bytes, and up to four connections without
// sockets: their bytes go through the reader's own path, `PacketHandler.handleBuffered` (the decoder,
// the handlers, `BrokerSessions`), and their outboxes are drained and encoded as the writer does, by
// `Outbox.encode`. The rest of the input is a program: connect, publish, subscribe, unsubscribe,
// acknowledge, ping, disconnect, a request (SUBSCRIBE and QoS 0 PUBLISH in one write), raw or
// corrupted bytes, read what the broker sent, drop the connection, and let closed connections be
// detached later (as the real reader's cleanup runs after other clients may have acted). A connection
// that was taken over or dropped as a slow consumer still handles one more write (bytes its reader had
// already read) before it sees its closed socket.
// BROKER_FUZZ_TRACE=1 prints each step when replaying an input.
//
// The bytes a client writes are cut at packet boundaries found by a second decoder, so that the
// harness knows which packet each call handled; but a SUBSCRIBE and the QoS 0 PUBLISH right behind it
// go together when the program says so, as the reader handles such a pair at once and may route the
// PUBLISH first (`PacketHandler.handle(_:then:session:state:outbox:)`). Oracles, any failure traps:
// - everything the broker writes decodes as whole MQTT 3.1.1 server-to-client packets; CONNACK comes
//   first and once, nothing follows a refusing CONNACK; QoS 0 PUBLISH has DUP=0 and QoS 1/2 a non-zero
//   packet id;
// - every packet handled gets its reply, in order: CONNACK (with the session-present flag and return
//   code the reference expects), PUBACK, PUBREC, PUBREL (to the session's connection), PUBCOMP, SUBACK
//   (return codes from the reference, including the subscription limit), UNSUBACK, PINGRESP; a resumed
//   session gets its unacknowledged PUBLISHes (DUP=1) and PUBRELs right after CONNACK, in order
//   [MQTT-4.4.0-1]; after a drain nothing expected is missing unless the outbox was aborted;
// - a reference of sessions (clean and persistent, takeover, offline discarding), their subscriptions
//   and their unreleased inbound QoS 2 ids equals BrokerSessions after every step, connection records
//   included;
// - a handled PUBLISH reaches each session with a matching subscription once, at min(published,
//   highest granted) QoS, with RETAIN=0 and the same topic and payload [MQTT-3.3.5-1], and no other
//   session; a QoS 2 id not yet released is not delivered again [MQTT-4.3.3-2]; an online
//   subscriber's outbox gets exactly that packet (or counts it dropped); a handled SUBSCRIBE gives its
//   session one QoS 1/2 copy, RETAIN=1, of each retained message each granted filter matches
//   [MQTT-3.3.1-6];
// - a SUBSCRIBE and a QoS 0 PUBLISH fed together end as if handled in order: the checks above, the
//   PUBLISH predicted after the SUBSCRIBE, and reaching no session if the SUBSCRIBE closed the
//   connection, unless it was routed first and the SUBACK overflowed the outbox (the one exception
//   Docs/Broker.md documents); the publisher's outbox gets the SUBACK first and, besides the retained copies, its own
//   copy only if its subscriptions, the new ones included, match the topic;
// - limits hold after every step: in-flight ids unique, non-zero and within the window; the session
//   queue within its message and byte bounds (one oversized message alone allowed) with its byte count
//   exact; no message waits while an online session's window has room; subscriptions per session; the
//   retained store within its bounds with exact bytes; outboxes within their hard limit; offline
//   sessions are persistent and within their bound;
// - closing one client closes no other, except the one it took over and slow consumers at their limit;
// - at the end, after every connection is detached, only offline persistent sessions remain.
import CoatyCore
import CoatyMQTTPackets
import CoatySockets
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `BROKER_FUZZ_TRACE=1` prints each step, for replaying a crash file.
private let isTracing = getenv("BROKER_FUZZ_TRACE") != nil

private func trace(_ message: @autoclosure () -> String) {
    guard isTracing else { return }
    let line = Array((message() + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

private let clientIDs = ["a", "b", "c", "", "coaty-broker-1"]
private let topics = ["t", "t/x", "u", "$s", "t/x/y", "", "t/+", "caf\u{E9}", "cafe\u{301}", "/"]
private let filters = ["t", "t/#", "+", "#", "+/x", "$s", "u", "t/x", "$s/#", "a#", "", "t/+/y", "caf\u{E9}"]

/// What a client expects next from the broker, besides non-DUP PUBLISHes.
private enum Expected: Equatable {
    case connack(MQTTConnAckPacket)
    case resendPublish(UInt16)
    case resendPubrel(UInt16)
    case packet(MQTTPacket)
}

/// The reference of one session.
private struct ReferenceSession {
    var clientID: [UInt8]
    var isPersistent: Bool
    var subscriptions: [[UInt8]: QualityOfService] = [:]
    var connection: ConnectionID?
    /// Inbound QoS 2 packet ids received and not released.
    var inboundQoS2: Set<UInt16> = []
}

/// A session's outbound QoS 1/2 messages so far (in flight, queued or dropped), and its newest one.
private struct DeliveryCount: Equatable {
    var total: Int
    var newest: BrokerMessage?

    init(_ session: Session) {
        self.total = session.inFlight.count + session.pending.count + session.droppedMessages
        self.newest = session.pending.elements.last ?? session.inFlight.last?.message
    }
}

/// The socket of a connection the harness drives without one: `PacketHandler` never touches it, and
/// the harness writes and closes nothing through it.
private final class NoSocket: ByteStreamConnection {
    var remoteDescription: String { "fuzz" }
    func read(maxBytes: Int) async throws -> [UInt8] { [] }
    func write(_ bytes: [UInt8]) async throws {}
    func write(contentsOf chunks: [[UInt8]]) async throws {}
    func noteExchange() {}
    func shutdownOutput() async {}
    func close() {}
    var isClosed: Bool { false }
}

private final class Client {
    let id: ConnectionID
    let state: ClientConnection.ReaderState
    let outbox: Outbox
    let watch: ActivityWatch
    var mirror: MQTTPacketDecoder
    var downstream = MQTTPacketDecoder()
    var expected: [Expected] = []
    var sawConnAck = false
    var sawRefusal = false
    /// Set when the reader ended; the connection is detached later.
    var closeReason: ClientConnection.CloseReason?
    /// Packet ids of QoS 1/2 PUBLISHes received, to acknowledge.
    var receivedIDs: [UInt16] = []
    /// Packets received so far, and where in that count a SUBACK must come: the first packet a
    /// SUBSCRIBE and PUBLISH pair queued (see `Harness.feedPair`).
    var receivedCount = 0
    var subackPositions: [Int] = []

    init(id: ConnectionID, broker: MQTTBroker) {
        let configuration = broker.configuration
        self.id = id
        self.outbox = Outbox(socket: nil, limits: broker.outboxLimits)
        self.watch = ActivityWatch(
            socket: nil,
            limit: configuration.connectTimeout,
            clock: ElapsedClock(configuration.clock)
        )
        self.state = ClientConnection.ReaderState(
            connection: ClientConnection(broker: broker, socket: NoSocket(), id: id),
            outbox: self.outbox,
            watch: self.watch,
            decoder: MQTTPacketDecoder(maximumPacketSize: configuration.maximumPacketSize),
            parkingSocket: nil
        )
        self.mirror = MQTTPacketDecoder(maximumPacketSize: configuration.maximumPacketSize)
    }

    /// Set when a write was handled after the outbox was aborted (bytes the reader had already read).
    var handledLateWrite = false
    /// Set when the reader ended with a reason that aborts the outbox, which drops what is queued.
    var abortedOnClose = false

    /// Whether the outbox was aborted (by this connection's close, a takeover or as a slow consumer),
    /// so that replies may be missing.
    var wasAborted: Bool { self.abortedOnClose || (self.outbox.isFinished && self.closeReason == nil) }
}

private final class Harness {
    let broker: MQTTBroker
    let configuration: MQTTBroker.Configuration
    var clients: [Client?] = [nil, nil, nil, nil]
    /// Connections whose reader ended and that are not detached yet.
    var closing: [Client] = []
    var nextConnection: UInt64 = 1
    var reference: [SessionID: ReferenceSession] = [:]
    /// Persistent sessions offline, oldest first.
    var offline: [SessionID] = []
    var topicsSeen: Set<[UInt8]> = []

    init(broker: MQTTBroker) {
        self.broker = broker
        self.configuration = broker.configuration
    }

    func handler(_ client: Client) -> PacketHandler {
        PacketHandler(broker: self.broker, id: client.id, remoteDescription: "fuzz")
    }

    func open(_ slot: Int) -> Client {
        if let client = self.clients[slot] { return client }
        let client = Client(id: ConnectionID(rawValue: self.nextConnection), broker: self.broker)
        self.nextConnection += 1
        self.clients[slot] = client
        return client
    }

    // MARK: Closing

    /// The reader ended: as `ClientConnection.serve` does, flush (refused, disconnected) or abort.
    func endReader(_ slot: Int, _ reason: ClientConnection.CloseReason) {
        guard let client = self.clients[slot] else { return }
        trace("  \(client.id) reader ends: \(reason)")
        self.clients[slot] = nil
        client.abortedOnClose = client.wasAborted
        switch reason {
        case .refused, .disconnected: client.outbox.finish()
        default:
            client.outbox.abort()
            client.abortedOnClose = true
        }
        client.closeReason = reason
        self.closing.append(client)
    }

    /// Runs the cleanup of connections whose reader ended, and updates the reference.
    func detachClosed() {
        for client in self.closing {
            self.drain(client)
            let reason = client.closeReason ?? .cancelled
            trace("  \(client.id) detached")
            self.handler(client).detach(reason, state: client.state)
            if let session = client.state.session, self.reference[session]?.connection == client.id {
                if self.reference[session]!.isPersistent {
                    self.reference[session]!.connection = nil
                    self.offline.append(session)
                    while self.offline.count > self.configuration.maximumOfflineSessions {
                        self.reference[self.offline.removeFirst()] = nil
                    }
                } else {
                    self.reference[session] = nil
                }
            }
        }
        self.closing = []
    }

    // MARK: Reading

    /// Takes what the writer would send, encodes it as the writer does, and checks it.
    func drain(_ client: Client) {
        let items = client.outbox.takeQueued()
        var bytes: [UInt8] = []
        Outbox.encode(items, into: &bytes, logger: self.broker.logger)
        client.downstream.append(bytes)
        while true {
            let packet: MQTTPacket
            do {
                guard let next = try client.downstream.next() else { break }
                packet = next
            } catch {
                fatalError("the broker wrote an undecodable packet: \(error)")
            }
            self.received(packet, by: client)
        }
        check(client.downstream.bufferedByteCount == 0, "a batch ended inside a packet")
        if !client.wasAborted {
            check(client.expected.isEmpty, "replies missing after a full drain: \(client.expected)")
        }
    }

    func received(_ packet: MQTTPacket, by client: Client) {
        trace("  \(client.id) received \(packet)")
        check(!client.sawRefusal, "a packet after a refusing CONNACK: \(packet)")
        if client.subackPositions.first == client.receivedCount {
            client.subackPositions.removeFirst()
            guard case .suback = packet else { fatalError("a pair's first packet is \(packet.type), not its SUBACK") }
        }
        client.receivedCount += 1
        if !client.sawConnAck {
            guard case .connack = packet else { fatalError("first packet is \(packet.type), not CONNACK") }
        }
        switch packet {
        case .connack(let connack):
            check(!client.sawConnAck, "a second CONNACK")
            client.sawConnAck = true
            client.sawRefusal = connack.returnCode != .accepted
            self.expect(.connack(connack), by: client)
        case .publish(let publish):
            if publish.qos == .atMostOnce {
                check(!publish.dup && publish.packetID == nil, "QoS 0 PUBLISH with DUP or a packet id")
            } else {
                let packetID = publish.packetID ?? 0
                check(packetID != 0, "QoS \(publish.qos) PUBLISH without a packet id")
                if client.receivedIDs.count < 64 { client.receivedIDs.append(packetID) }
            }
            check(TopicName.isValid(publish.topic), "PUBLISH to an invalid topic")
            if publish.dup {
                self.expect(.resendPublish(publish.packetID ?? 0), by: client)
            } else if case .resendPublish = client.expected.first {
                fatalError("a new PUBLISH before the resent ones")
            } else if case .resendPubrel = client.expected.first {
                fatalError("a new PUBLISH before the resent PUBRELs")
            }
        case .pubrel(let packetID):
            if case .resendPubrel = client.expected.first {
                self.expect(.resendPubrel(packetID), by: client)
            } else {
                self.expect(.packet(packet), by: client)
            }
        case .connect, .subscribe, .unsubscribe, .pingreq, .disconnect:
            fatalError("the broker sent a client-to-server packet: \(packet.type)")
        default:
            self.expect(.packet(packet), by: client)
        }
    }

    func expect(_ item: Expected, by client: Client) {
        guard let first = client.expected.first else { fatalError("unexpected \(item)") }
        check(first == item, "expected \(first), got \(item)")
        client.expected.removeFirst()
    }

    // MARK: Writing

    /// Writes `bytes` from the client in `slot`, opening a connection if there is none. With `pairs`, a
    /// SUBSCRIBE and the QoS 0 PUBLISH right behind it go to the reader together (see `feedPair`).
    func write(_ bytes: [UInt8], slot: Int, pairs: Bool = false) {
        guard !bytes.isEmpty else { return }
        trace("slot \(slot) writes \(bytes.count) bytes")
        let client = self.open(slot)
        if client.outbox.isFinished {
            // Taken over or dropped as a slow consumer, so the socket is closed. The reader still
            // handles what it had read before (one more write), then sees the closed socket.
            if client.handledLateWrite {
                self.endReader(slot, .connectionLost("closed"))
                return
            }
            client.handledLateWrite = true
        }
        if !client.state.sawFirstByte {
            // As ClientConnection.read does.
            client.state.sawFirstByte = true
            if bytes[0] != 0x10 {
                self.endReader(slot, .protocolViolation("first packet is not CONNECT"))
                return
            }
        }
        let leftover = client.mirror.bufferedByteCount
        client.mirror.append(bytes)
        let total = client.mirror.bufferedByteCount
        var start = 0
        while true {
            let packet: MQTTPacket?
            var failed = false
            do {
                packet = try client.mirror.next()
            } catch {
                packet = nil
                failed = true
            }
            let end = packet == nil ? bytes.count : total - client.mirror.bufferedByteCount - leftover
            let segment = Array(bytes[start..<end])
            start = end
            // Only while the session is attached to this client, whose outbox then gets its retained copies.
            if pairs, case .subscribe(let subscribe)? = packet, let session = client.state.session,
                self.reference[session]?.connection == client.id
            {
                var peek = client.mirror
                if case .publish(let publish)? = try? peek.next(), publish.qos == .atMostOnce {
                    client.mirror = peek
                    let pairEnd = total - client.mirror.bufferedByteCount - leftover
                    let result = self.feedPair(
                        subscribe,
                        publish,
                        bytes: segment + bytes[start..<pairEnd],
                        client: client
                    )
                    start = pairEnd
                    if let result {
                        self.endReader(slot, result)
                        return
                    }
                    continue
                }
            }
            let expectation = packet.map { self.prepare($0, client: client) }
            let otherDepths = self.clients.map { $0.map { ($0.outbox.isFinished, $0.outbox.unreadBytes) } }
            let result = self.feed(segment, to: client)
            trace("  \(client.id) handled \(packet.map { "\($0)" } ?? "no packet"): \(result.map { "\($0)" } ?? "ok")")
            self.checkOthers(otherDepths, after: packet, by: client)
            if let packet, let expectation {
                self.apply(packet, expectation, result: result, client: client)
            } else {
                check(
                    failed == (result != nil),
                    "decoder disagreement: mirror failed \(failed), reader \(result.map { "\($0)" } ?? "nil")"
                )
                if case .refused(let code) = result {
                    if !client.outbox.isFinished {
                        client.expected.append(.connack(MQTTConnAckPacket(returnCode: code)))
                    }
                }
            }
            if let result {
                self.endReader(slot, result)
                return
            }
            if packet == nil { return }
        }
    }

    /// Feeds bytes to the real reader path; returns the reason to close, if any.
    func feed(_ segment: [UInt8], to client: Client) -> ClientConnection.CloseReason? {
        client.state.decoder.append(segment)
        let handler = self.handler(client)
        while let step = handler.handleBuffered(client.state, outbox: client.outbox, watch: client.watch) {
            switch step {
            case .close(let reason): return reason
            case .pace:
                client.state.congestedSessions = []
                client.state.congestedConnections = []
            case .waitForWriter:
                // The real reader would wait for its writer; going on only brings the unread bound closer.
                break
            }
        }
        return nil
    }

    /// Feeds a SUBSCRIBE and the QoS 0 PUBLISH right behind it in one call, so that the reader handles
    /// them as a pair (`PacketHandler.handle(_:then:session:state:outbox:)`): it routes the PUBLISH
    /// first if none of the SUBSCRIBE's filters and none of the publisher's own subscriptions matches
    /// the topic. The outcome must be that of handling them in order, but for a PUBLISH routed first
    /// ahead of a SUBACK that overflows the outbox. Returns the reason to close, if any.
    func feedPair(
        _ subscribe: MQTTSubscribePacket,
        _ publish: MQTTPublishPacket,
        bytes: [UInt8],
        client: Client
    ) -> ClientConnection.CloseReason? {
        let session = client.state.session!
        let key = self.reference[session]!.clientID
        let topic = Array(publish.topic.utf8)
        let filters = subscribe.subscriptions.map { try? TopicFilter($0.filter) }
        let isValid = zip(filters, subscribe.subscriptions).allSatisfy {
            $0 != nil && SubscriptionTrie.admits($1.filter)
        }
        let subscriptions = self.reference[session]!.subscriptions
        // Whether the broker takes the path that routes the PUBLISH first, for the trace.
        let ownMatch = subscriptions.keys.contains {
            (try? TopicFilter(String(decoding: $0, as: UTF8.self)))?.matches(bytes: topic) == true
        }
        let routedFirst =
            isValid && SubscriptionTrie.admits(publish.topic) && !ownMatch
            && !filters.contains { $0?.matches(bytes: topic) == true }
        // The PUBLISH is predicted as handled after the SUBSCRIBE: with its subscriptions, and with the
        // retained copies it gives the publisher's session.
        let first = self.prepare(.subscribe(subscribe), client: client)
        if isValid, let new = first.subscriptions { self.reference[session]!.subscriptions = new }
        var second = self.prepare(.publish(publish), client: client)
        self.reference[session]!.subscriptions = subscriptions
        if isValid { second.countsBefore[session]?.total += first.retainedCopies }
        let inFlight = { self.broker.core.withLock { $0.sessions.sessions[ByteKey(key)]?.inFlight.count ?? 0 } }
        let inFlightBefore = inFlight()
        let wasFinished = client.outbox.isFinished
        let depthBefore = client.outbox.depth
        let queuedBefore = depthBefore + client.outbox.droppedCount
        let otherDepths = self.clients.map { $0.map { ($0.outbox.isFinished, $0.outbox.unreadBytes) } }
        let result = self.feed(bytes, to: client)
        let order = routedFirst ? ", the PUBLISH routed first" : ""
        trace(
            "  \(client.id) handled SUBSCRIBE \(subscribe.subscriptions.map(\.filter)) and QoS 0 PUBLISH"
                + " '\(publish.topic)' fed together\(order): \(result.map { "\($0)" } ?? "ok")"
        )
        self.checkOthers(otherDepths, after: .publish(publish), by: client)
        // The close is the SUBSCRIBE's for an invalid filter or a SUBACK that overflows the outbox (a
        // QoS 0 PUBLISH has no reply). In order, the PUBLISH behind it is then never handled; routed
        // first, it has reached its subscribers before the SUBACK overflowed (Docs/Broker.md).
        var closedBySubscribe = !isValid
        if case .slowConsumer = result { closedBySubscribe = true }
        check(isValid || result != nil, "a SUBSCRIBE with an invalid filter did not close")
        self.apply(.subscribe(subscribe), first, result: closedBySubscribe ? result : nil, client: client)
        if closedBySubscribe, !routedFirst {
            second.deliveries = [:]
            self.checkDeliveries(publish, second, publisher: client)
        } else {
            self.apply(.publish(publish), second, result: closedBySubscribe ? nil : result, client: client)
        }
        if result == nil, !wasFinished, !client.outbox.isFinished {
            // The publisher's outbox got the SUBACK first and, besides the retained copies, its own copy
            // only if one of its subscriptions, old or new, matches the topic.
            let copies =
                first.retainedQoS0Copies + inFlight() - inFlightBefore + (second.deliveries[session] == nil ? 0 : 1)
            let queued = client.outbox.depth + client.outbox.droppedCount - queuedBefore
            check(
                queued == 1 + copies,
                "a pair queued \(queued) packets for its publisher, expected the SUBACK and \(copies)"
            )
            client.subackPositions.append(client.receivedCount + depthBefore)
        }
        return result
    }

    /// Closing one client closes no other, but the one its CONNECT took over and slow consumers.
    func checkOthers(_ before: [(Bool, Int)?], after packet: MQTTPacket?, by client: Client) {
        for (slot, other) in self.clients.enumerated() {
            guard let other, other !== client, let (wasFinished, unread) = before[slot] else { continue }
            guard !wasFinished, other.outbox.isFinished else { continue }
            if case .connect = packet, other.state.clientID != nil, other.state.clientID == client.state.clientID {
                continue
            }
            // A will, a publish and a PUBREL at most reach another client per step.
            let step = 3 * (self.broker.configuration.maximumPacketSize + 8)
            check(unread + step > other.outbox.unreadLimit, "\(client.id) closed \(other.id) at \(unread) bytes unread")
        }
    }

    /// What handling `packet` should do, computed before it is handled.
    struct Prediction {
        var replies: [Expected] = []
        var pubrelTarget: ConnectionID?
        var resumed: SessionID?
        var sessionPresent = false
        var refusal: MQTTConnectReturnCode?
        var subscriptions: [[UInt8]: QualityOfService]?
        var wasConnected = false
        /// For a PUBLISH: the QoS each session should get it at, and the counts before.
        var deliveries: [SessionID: QualityOfService] = [:]
        var countsBefore: [SessionID: DeliveryCount] = [:]
        var outboxesBefore: [ConnectionID: Int] = [:]
        /// For a SUBSCRIBE: the retained QoS 1/2 copies the session should get, and the QoS 0 ones
        /// (which go to its outbox only).
        var retainedCopies = 0
        var retainedQoS0Copies = 0
    }

    func prepare(_ packet: MQTTPacket, client: Client) -> Prediction {
        var prediction = Prediction()
        prediction.wasConnected = client.state.session != nil
        let sessions = self.broker.core.withLock { $0.sessions }
        switch packet {
        case .connect(let connect):
            self.topicsSeen.insert(Array((connect.will?.topic ?? "").utf8))
            guard client.state.session == nil else { break }
            if connect.clientID.isEmpty, !connect.cleanSession {
                prediction.refusal = .identifierRejected
            } else if let credentials = self.configuration.credentials {
                if connect.username == nil {
                    prediction.refusal = .notAuthorized
                } else if Array(connect.username!.utf8) != Array(credentials.username.utf8)
                    || connect.password != Array(credentials.password.utf8)
                {
                    prediction.refusal = .badUsernameOrPassword
                }
            }
            let key = Array(connect.clientID.utf8)
            if !connect.cleanSession, !key.isEmpty,
                let (id, session) = self.reference.first(where: { $0.value.clientID == key }), session.isPersistent
            {
                prediction.resumed = id
                prediction.sessionPresent = true
                let actual = sessions.sessions[ByteKey(key)]
                check(actual?.id == id, "reference session \(id) of '\(connect.clientID)' is not the broker's")
                trace(
                    "  resuming \(id) with in flight \(actual!.inFlight.map { ($0.packetID, $0.state, $0.message.payload.count) }), queued \(actual!.pending.count)"
                )
                prediction.replies = actual!.inFlight.map {
                    $0.state == .awaitingPubComp ? .resendPubrel($0.packetID) : .resendPublish($0.packetID)
                }
            }
        case .publish(let publish):
            self.topicsSeen.insert(Array(publish.topic.utf8))
            self.predictDeliveries(publish, client: client, sessions: sessions, into: &prediction)
            switch publish.qos {
            case .atMostOnce: break
            case .atLeastOnce: prediction.replies = [.packet(.puback(publish.packetID ?? 0))]
            case .exactlyOnce: prediction.replies = [.packet(.pubrec(publish.packetID ?? 0))]
            }
        case .pubrec(let packetID):
            if let session = client.state.session, let key = self.reference[session]?.clientID,
                let actual = sessions.sessions[ByteKey(key)]
            {
                prediction.pubrelTarget = actual.connection
                if let entry = actual.inFlight.first(where: { $0.packetID == packetID }), entry.state == .awaitingPubAck
                {
                    prediction.pubrelTarget = nil
                }
            }
        case .pubrel(let packetID):
            prediction.replies = [.packet(.pubcomp(packetID))]
        case .subscribe(let subscribe):
            guard let session = client.state.session else { break }
            var codes: [MQTTSubAckReturnCode] = []
            if var reference = self.reference[session] {
                for subscription in subscribe.subscriptions {
                    let bytes = Array(subscription.filter.utf8)
                    if reference.subscriptions[bytes] != nil
                        || reference.subscriptions.count < self.configuration.maximumSubscriptionsPerClient
                    {
                        reference.subscriptions[bytes] = subscription.qos.qualityOfService
                        codes.append(.granted(subscription.qos))
                        // Each granted filter gets the retained messages it matches [MQTT-3.3.1-6].
                        if let filter = try? TopicFilter(subscription.filter) {
                            for topic in self.topicsSeen where filter.matches(bytes: topic) {
                                guard let message = sessions.retained.message(topic: topic) else { continue }
                                if min(message.qos, subscription.qos.qualityOfService) != .atMostOnce {
                                    prediction.retainedCopies += 1
                                } else {
                                    prediction.retainedQoS0Copies += 1
                                }
                            }
                        }
                    } else {
                        codes.append(.failure)
                    }
                }
                prediction.subscriptions = reference.subscriptions
                if let actual = sessions.sessions[ByteKey(reference.clientID)] {
                    prediction.countsBefore[session] = DeliveryCount(actual)
                }
            }
            prediction.replies = [.packet(.suback(MQTTSubAckPacket(packetID: subscribe.packetID, returnCodes: codes)))]
        case .unsubscribe(let unsubscribe):
            guard let session = client.state.session else { break }
            if var reference = self.reference[session] {
                for filter in unsubscribe.filters { reference.subscriptions[Array(filter.utf8)] = nil }
                prediction.subscriptions = reference.subscriptions
            }
            prediction.replies = [.packet(.unsuback(unsubscribe.packetID))]
        case .pingreq:
            prediction.replies = [.packet(.pingresp)]
        default:
            break
        }
        return prediction
    }

    /// Which sessions a PUBLISH from `client` reaches, at which QoS: each subscribed session once, at
    /// min(published, highest granted) [MQTT-3.3.5-1]; none for a QoS 2 id not yet released
    /// [MQTT-4.3.3-2].
    func predictDeliveries(
        _ publish: MQTTPublishPacket,
        client: Client,
        sessions: BrokerSessions,
        into prediction: inout Prediction
    ) {
        guard let publisher = client.state.session else { return }
        // A QoS 2 duplicate is answered but not delivered again.
        let isDuplicate =
            publish.qos == .exactlyOnce
            && self.reference[publisher]?.inboundQoS2.contains(publish.packetID ?? 0) == true
        if !isDuplicate {
            let topic = Array(publish.topic.utf8)
            for (id, session) in self.reference {
                var granted: QualityOfService?
                for (filter, qos) in session.subscriptions {
                    guard let filter = try? TopicFilter(String(decoding: filter, as: UTF8.self)),
                        filter.matches(bytes: topic)
                    else { continue }
                    granted = max(granted ?? qos, qos)
                }
                if let granted { prediction.deliveries[id] = min(publish.qos.qualityOfService, granted) }
            }
        }
        for session in sessions.sessions.values { prediction.countsBefore[session.id] = DeliveryCount(session) }
        for other in self.clients.compactMap({ $0 }) + self.closing where !other.outbox.isFinished {
            prediction.outboxesBefore[other.id] = other.outbox.depth + other.outbox.droppedCount
        }
    }

    /// Checks that a handled PUBLISH reached the predicted sessions, once each, and no other.
    func checkDeliveries(_ publish: MQTTPublishPacket, _ prediction: Prediction, publisher: Client) {
        let sessions = self.broker.core.withLock { $0.sessions.sessions }
        for session in sessions.values {
            guard let before = prediction.countsBefore[session.id] else { continue }
            let after = DeliveryCount(session)
            let qos = prediction.deliveries[session.id]
            var packets = 0
            if let qos, qos != .atMostOnce {
                check(after.total == before.total + 1, "session \(session.id) got \(after.total - before.total) copies")
                let message = after.newest
                check(
                    message?.topic == Array(publish.topic.utf8) && message?.payload == publish.payload
                        && message?.qos == qos && message?.retain == false,
                    "session \(session.id) got \(String(describing: message)) at QoS \(qos)"
                )
                if session.inFlight.last?.message == message, session.pending.isEmpty { packets = 1 }
            } else {
                check(after.total == before.total, "session \(session.id) got a QoS 1/2 copy it should not")
                if qos == .atMostOnce { packets = 1 }
            }
            // Its connection's outbox got the packet (or counted it as dropped), and nothing else.
            guard let connection = session.connection, connection != publisher.id,
                let outbox = (self.clients + self.closing).first(where: { $0?.id == connection })??.outbox,
                let queued = prediction.outboxesBefore[connection], !outbox.isFinished
            else { continue }
            check(outbox.depth + outbox.droppedCount == queued + packets, "\(connection) got the wrong packets")
        }
    }

    /// Checks what handling `packet` did and updates the reference.
    func apply(
        _ packet: MQTTPacket,
        _ prediction: Prediction,
        result: ClientConnection.CloseReason?,
        client: Client
    ) {
        if case .connect(let connect) = packet, !prediction.wasConnected {
            if let refusal = prediction.refusal {
                guard case .refused(let code) = result, code == refusal else {
                    fatalError("CONNECT should be refused with \(refusal), got \(result.map { "\($0)" } ?? "accepted")")
                }
                client.expected.append(.connack(MQTTConnAckPacket(returnCode: refusal)))
                return
            }
            if case .refused(let code) = result {
                check(code == .unacceptableProtocolVersion, "CONNECT refused with \(code)")
                client.expected.append(.connack(MQTTConnAckPacket(returnCode: code)))
                return
            }
            guard result == nil, let session = client.state.session else { return }
            // Accepted: takeover, then a new or resumed session.
            let key = Array((client.state.clientID ?? "").utf8)
            if connect.clientID.isEmpty {
                check(!self.reference.values.contains { $0.clientID == key }, "assigned client id in use")
            }
            if let (old, existing) = self.reference.first(where: { $0.value.clientID == key }) {
                // Takeover: the old connection's outbox is aborted, also when its reader already ended.
                for other in self.closing where other.id == existing.connection { other.abortedOnClose = true }
                self.reference[old]!.connection = nil
                if connect.cleanSession || !existing.isPersistent {
                    self.reference[old] = nil
                }
                self.offline.removeAll { $0 == old }
            }
            if let resumed = prediction.resumed {
                check(session == resumed, "resumed \(session), expected \(resumed)")
            } else {
                check(self.reference[session] == nil, "new session \(session) reuses an id")
                self.reference[session] = ReferenceSession(clientID: key, isPersistent: !connect.cleanSession)
            }
            self.reference[session]!.connection = client.id
            client.expected.append(.connack(MQTTConnAckPacket(sessionPresent: prediction.sessionPresent)))
            client.expected += prediction.replies
            return
        }
        let handled = result == nil
        // A reply that does not fit in the outbox closes the connection after the state changed (the
        // packet's own delivery to this client may have taken the last place).
        var applied = handled
        if case .slowConsumer = result { applied = true }
        switch packet {
        case .publish(let publish):
            if handled { self.checkDeliveries(publish, prediction, publisher: client) }
            if let session = client.state.session, publish.qos == .exactlyOnce, self.reference[session] != nil,
                applied
            {
                self.reference[session]!.inboundQoS2.insert(publish.packetID ?? 0)
            }
        case .pubrel(let packetID):
            if let session = client.state.session, self.reference[session] != nil, applied {
                self.reference[session]!.inboundQoS2.remove(packetID)
            }
        case .subscribe, .unsubscribe:
            if handled, let session = client.state.session, let before = prediction.countsBefore[session],
                let key = self.reference[session]?.clientID
            {
                let actual = self.broker.core.withLock { $0.sessions.sessions[ByteKey(key)].map(DeliveryCount.init) }
                check(
                    actual?.total == before.total + prediction.retainedCopies,
                    "SUBSCRIBE: \(String(describing: actual)) retained copies after \(before), expected \(prediction.retainedCopies) more"
                )
                if prediction.retainedCopies > 0 {
                    check(actual?.newest?.retain == true, "retained copy without RETAIN")
                }
            }
            if applied, let session = client.state.session,
                let subscriptions = prediction.subscriptions, self.reference[session] != nil
            {
                var valid = true
                if case .subscribe(let subscribe) = packet {
                    valid = subscribe.subscriptions.allSatisfy {
                        (try? TopicFilter($0.filter)) != nil && SubscriptionTrie.admits($0.filter)
                    }
                } else if case .unsubscribe(let unsubscribe) = packet {
                    valid = unsubscribe.filters.allSatisfy(SubscriptionTrie.admits)
                }
                if valid { self.reference[session]!.subscriptions = subscriptions }
            }
        case .pubrec(let packetID):
            if handled, let target = prediction.pubrelTarget,
                let receiver = (self.clients + self.closing).first(where: { $0?.id == target }) ?? nil,
                !receiver.outbox.isFinished
            {
                receiver.expected.append(.packet(.pubrel(packetID)))
            }
        default:
            break
        }
        if handled, !client.outbox.isFinished { client.expected += prediction.replies }
    }

    // MARK: Invariants

    func checkInvariants() {
        let configuration = self.configuration
        let attached = self.clients.compactMap { $0 } + self.closing
        let reference = self.reference
        let topicsSeen = self.topicsSeen
        self.broker.core.withLock { core in
            let state = core.sessions
            var subscriptionCount = 0
            var offline = 0
            var connections = 0
            check(
                state.sessions.count == reference.count,
                "\(state.sessions.count) sessions, reference \(reference.count)"
            )
            for (key, session) in state.sessions {
                check(Array(session.clientID.utf8) == key.bytes, "session stored under another key")
                guard let expected = reference[session.id] else { fatalError("session \(session.id) not in reference") }
                check(expected.clientID == key.bytes, "session \(session.id) has another client id")
                check(expected.isPersistent == session.isPersistent, "session \(session.id) persistence")
                check(
                    expected.subscriptions
                        == Dictionary(uniqueKeysWithValues: session.subscriptions.map { ($0.bytes, $1) }),
                    "session \(session.id) subscriptions \(session.subscriptions) vs \(expected.subscriptions)"
                )
                check(expected.connection == session.connection, "session \(session.id) connection")
                check(expected.inboundQoS2 == session.inboundQoS2, "session \(session.id) inbound QoS 2 ids")
                subscriptionCount += session.subscriptions.count
                check(
                    session.subscriptions.count <= configuration.maximumSubscriptionsPerClient,
                    "too many subscriptions"
                )
                let ids = session.inFlight.map(\.packetID)
                check(ids.count <= configuration.maximumInFlightMessagesPerClient, "in-flight window exceeded")
                check(Set(ids).count == ids.count && !ids.contains(0), "in-flight ids \(ids)")
                let pending = session.pending
                check(pending.count <= configuration.maximumQueuedMessagesPerClient, "session queue too long")
                let bytes = pending.elements.reduce(0) { $0 + $1.queuedSize }
                check(bytes == pending.byteCount, "session queue counts \(pending.byteCount) bytes, holds \(bytes)")
                check(bytes <= configuration.maximumQueuedBytesPerClient || pending.count == 1, "session queue bytes")
                check(!pending.elements.contains { $0.qos == .atMostOnce }, "QoS 0 in a session queue")
                if let connection = session.connection {
                    connections += 1
                    check(attached.contains { $0.id == connection }, "session attached to a gone connection")
                    check(
                        pending.isEmpty || ids.count == configuration.maximumInFlightMessagesPerClient,
                        "a message waits while the window has room"
                    )
                } else {
                    offline += 1
                    check(session.isPersistent, "an offline clean session")
                }
            }
            check(offline <= configuration.maximumOfflineSessions, "too many offline sessions")
            check(
                state.connectionCount == connections,
                "\(state.connectionCount) connection records, \(connections) attached"
            )
            check(
                state.subscriptions.count == subscriptionCount,
                "trie holds \(state.subscriptions.count), sessions \(subscriptionCount)"
            )
            let retained = state.retained
            check(retained.count <= configuration.maximumRetainedMessages, "retained count")
            check(retained.byteCount <= configuration.maximumRetainedBytes, "retained bytes")
            var found = 0
            var bytes = 0
            for topic in topicsSeen {
                guard let message = retained.message(topic: topic) else { continue }
                check(message.retain && !message.payload.isEmpty && message.topic == topic, "retained message")
                found += 1
                bytes += message.queuedSize
            }
            check(
                found == retained.count && bytes == retained.byteCount,
                "retained store \(retained.count)/\(retained.byteCount), found \(found)/\(bytes)"
            )
            for (id, outbox) in core.outboxes {
                check(attached.contains { $0.id == id }, "outbox of a detached connection")
                check(outbox.depth <= 1 || outbox.unreadBytes <= outbox.unreadLimit, "outbox beyond its unread bound")
            }
        }
    }
}

// MARK: - Packets

private func packetID(_ program: inout FuzzInput) -> UInt16 {
    let byte = program.next()
    return byte == 0xFF ? 0 : UInt16(byte % 8) + 1
}

private func makePacket(_ kind: UInt8, program: inout FuzzInput, client: Client?) -> MQTTPacket {
    switch kind {
    case 0:
        let flags = program.next()
        var will: MQTTWill?
        if flags & 1 != 0 {
            will = MQTTWill(
                topic: program.pick(topics),
                payload: Array(repeating: 0x77, count: Int(program.next() % 24)),
                qos: MQTTQoS(rawValue: (flags >> 1) % 3) ?? .atMostOnce,
                retain: flags & 8 != 0
            )
        }
        return .connect(
            MQTTConnectPacket(
                clientID: program.pick(clientIDs),
                cleanSession: flags & 16 != 0,
                keepAliveSeconds: UInt16(flags >> 5),
                will: will,
                username: flags & 64 != 0 ? "user" : nil,
                password: flags & 128 != 0 ? Array("pass".utf8) : nil
            )
        )
    case 1:
        let flags = program.next()
        let qos = MQTTQoS(rawValue: flags % 3) ?? .atMostOnce
        return .publish(
            MQTTPublishPacket(
                topic: program.pick(topics),
                payload: Array(repeating: 0x70, count: Int(program.next() % 40)),
                qos: qos,
                retain: flags & 4 != 0,
                dup: qos != .atMostOnce && flags & 8 != 0,
                packetID: qos == .atMostOnce ? nil : packetID(&program)
            )
        )
    case 2:
        let count = Int(program.next() % 4) + 1
        let subscriptions = (0..<count).map { _ in
            MQTTSubscription(filter: program.pick(filters), qos: MQTTQoS(rawValue: program.next() % 3) ?? .atMostOnce)
        }
        return .subscribe(MQTTSubscribePacket(packetID: packetID(&program), subscriptions: subscriptions))
    case 3:
        let count = Int(program.next() % 3) + 1
        return .unsubscribe(
            MQTTUnsubscribePacket(packetID: packetID(&program), filters: (0..<count).map { _ in program.pick(filters) })
        )
    case 4:
        let which = program.next()
        var id = packetID(&program)
        if which & 4 != 0, let received = client?.receivedIDs, !received.isEmpty {
            id = received[Int(which >> 3) % received.count]
        }
        switch which & 3 {
        case 0: return .puback(id)
        case 1: return .pubrec(id)
        case 2: return .pubrel(id)
        default: return .pubcomp(id)
        }
    case 5:
        return .pingreq
    default:
        return .disconnect
    }
}

/// A SUBSCRIBE and a QoS 0 PUBLISH in one write, as a Coaty request sends its response subscription
/// and the request: mostly to a topic that none of the filters matches, which the broker routes first.
private func makeRequest(_ program: inout FuzzInput) -> [UInt8] {
    let subscribe = makePacket(2, program: &program, client: nil)
    let flags = program.next()
    var topic = topics[Int(flags >> 2) % topics.count]
    if flags & 1 == 0, case .subscribe(let packet) = subscribe {
        let filters = packet.subscriptions.compactMap { try? TopicFilter($0.filter) }
        let start = Int(flags >> 2)
        topic =
            (0..<topics.count).lazy.map { topics[(start + $0) % topics.count] }.first { topic in
                TopicName.isValid(topic) && !filters.contains { $0.matches(topic) }
            } ?? topic
    }
    let payload = Array(repeating: UInt8(0x71), count: Int(program.next() % 16))
    let publish = MQTTPublishPacket(topic: topic, payload: payload, qos: .atMostOnce, retain: flags & 2 != 0)
    return encoded(subscribe) + encoded(.publish(publish))
}

private func encoded(_ packet: MQTTPacket) -> [UInt8] {
    (try? packet.encoded()) ?? []
}

// MARK: - Entry point

private func makeConfiguration(_ program: inout FuzzInput) -> MQTTBroker.Configuration {
    let a = program.next()
    let b = program.next()
    return MQTTBroker.Configuration(
        maximumPacketSize: [1 << 20, 64, 24][Int(a & 3) % 3],
        maximumQueuedMessagesPerClient: [1, 2, 4, 1000][Int(a >> 2 & 3)],
        maximumQueuedBytesPerClient: [1 << 20, 8, 40, 100][Int(a >> 4 & 3)],
        // Small unread bounds with small queues, as the count of unread packets was tied to them before.
        maximumUnreadBytesPerClient: [40, 80, 200, 64 << 20][Int(a >> 2 & 3)],
        maximumInFlightMessagesPerClient: [1, 2, 3, 20][Int(a >> 6 & 3)],
        maximumRetainedMessages: [100, 0, 1, 2][Int(b & 3)],
        maximumRetainedBytes: [1 << 20, 8, 40, 0][Int(b >> 2 & 3)],
        maximumSubscriptionsPerClient: [100, 1, 2, 3][Int(b >> 4 & 3)],
        maximumOfflineSessions: [100, 0, 1][Int(b >> 6 & 3) % 3],
        credentials: b >> 6 == 3 ? .init(username: "user", password: "pass") : nil
    )
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBrokerConnection(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var program = FuzzInput(data, count: count)
    let configuration = makeConfiguration(&program)
    guard let broker = try? MQTTBroker.bind(host: "127.0.0.1", port: 0, configuration: configuration) else {
        fatalError("cannot bind a broker")
    }
    let harness = Harness(broker: broker)
    var steps = 0
    while !program.isAtEnd, steps < 400 {
        steps += 1
        let operation = program.next()
        let slot = Int(operation & 3)
        switch operation >> 2 {
        case 0..<8:
            // CONNECT (often the first packet of a new connection).
            harness.write(encoded(makePacket(0, program: &program, client: nil)), slot: slot)
        case 8..<18:
            harness.write(encoded(makePacket(1, program: &program, client: nil)), slot: slot)
        case 18..<20:
            harness.write(makeRequest(&program), slot: slot, pairs: true)
        case 20..<28:
            harness.write(encoded(makePacket(2, program: &program, client: nil)), slot: slot)
        case 28..<32:
            harness.write(encoded(makePacket(3, program: &program, client: nil)), slot: slot)
        case 32..<40:
            harness.write(encoded(makePacket(4, program: &program, client: harness.clients[slot])), slot: slot)
        case 40..<42:
            harness.write(encoded(makePacket(5, program: &program, client: nil)), slot: slot)
        case 42..<44:
            harness.write(encoded(makePacket(6, program: &program, client: nil)), slot: slot)
        case 44..<48:
            // Several packets in one write, a SUBSCRIBE and a QoS 0 PUBLISH behind it fed together or not.
            var bytes: [UInt8] = []
            let count = program.next()
            for _ in 0..<(Int(count % 3) + 2) {
                let kind = program.next() % 7
                bytes += encoded(makePacket(kind, program: &program, client: harness.clients[slot]))
            }
            harness.write(bytes, slot: slot, pairs: count & 0x80 != 0)
        case 48..<51:
            // Raw bytes.
            harness.write(program.take(Int(program.next() % 32) + 1), slot: slot)
        case 51..<54:
            // A packet with one byte changed, or cut short.
            let kind = program.next() % 7
            var bytes = encoded(makePacket(kind, program: &program, client: harness.clients[slot]))
            let position = Int(program.next())
            let value = program.next()
            if !bytes.isEmpty {
                if value == 0 {
                    bytes.removeLast(min(bytes.count - 1, position % bytes.count + 1))
                } else {
                    bytes[position % bytes.count] ^= value
                }
            }
            harness.write(bytes, slot: slot)
        case 54..<60:
            if let client = harness.clients[slot] { harness.drain(client) }
        case 60..<62:
            harness.endReader(slot, .connectionLost("closed by peer"))
        default:
            harness.detachClosed()
        }
        harness.checkInvariants()
    }
    for slot in 0..<4 { harness.endReader(slot, .connectionLost("closed by peer")) }
    harness.detachClosed()
    harness.checkInvariants()
    broker.core.withLock { core in
        check(core.sessions.connectionCount == 0, "connection records left")
        check(core.outboxes.isEmpty, "outboxes left")
        for session in core.sessions.sessions.values {
            check(session.isPersistent && session.connection == nil, "a clean or attached session left")
        }
    }
    return 0
}
