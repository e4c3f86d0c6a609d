// The broker harness's driver: opens, feeds and closes the fuzzed connections and reads what the
// broker sent them (see BrokerConnectionFuzz.swift).
import CoatyCore
import CoatyMQTTPackets
import CoatySockets
import Synchronization

final class Harness {
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
            let otherDepths = self.otherDepths()
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
        let isValid = isAdmitted(subscribe)
        let subscriptions = self.reference[session]!.subscriptions
        // Whether the broker routes the PUBLISH first: then it stands even if the SUBSCRIBE closes.
        let routedFirst =
            isValid && SubscriptionTrie.admits(publish.topic) && self.reference[session]!.grant(for: topic) == nil
            && !subscribe.subscriptions.contains { (try? TopicFilter($0.filter))?.matches(bytes: topic) == true }
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
        let otherDepths = self.otherDepths()
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

    /// Whether each slot's outbox is finished, and its unread bytes, for ``checkOthers(_:after:by:)``.
    func otherDepths() -> [(Bool, Int)?] {
        self.clients.map { $0.map { ($0.outbox.isFinished, $0.outbox.unreadBytes) } }
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
}
