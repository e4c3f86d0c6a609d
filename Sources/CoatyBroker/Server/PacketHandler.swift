import CoatyCore
import CoatyMQTTPackets
import Synchronization

/// The synchronous half of a ``ClientConnection``'s reader: decodes the buffered packets, handles them
/// against the broker's shared state, and detaches the connection once it has closed.
///
/// It does no socket I/O (replies go to the connection's ``Outbox``), so tests and the fuzz harness
/// `Fuzz/Broker/BrokerConnectionFuzz.swift` can drive it for connections without a socket.
struct PacketHandler {
    let broker: MQTTBroker
    let id: ConnectionID
    /// The peer's address, for logs and events.
    let remoteDescription: String

    typealias CloseReason = ClientConnection.CloseReason
    typealias ReaderState = ClientConnection.ReaderState
    typealias ReaderStep = ClientConnection.ReaderStep

    private var configuration: MQTTBroker.Configuration { self.broker.configuration }

    /// Decodes and handles the buffered packets; returns `nil` when more bytes are needed.
    ///
    /// Only whole packets count as activity, once per call that decoded any, before any reply can
    /// leave: the keep-alive deadline waits for a Control Packet [MQTT-3.1.2-24], and the connect
    /// timeout runs from the accept until CONNECT. Counting bytes let a client that sends one byte of a
    /// never-ending packet every few seconds keep its connection, and the up to `maximumPacketSize`
    /// bytes buffered for it, forever.
    func handleBuffered(_ state: ReaderState, outbox: Outbox, watch: ActivityWatch) -> ReaderStep? {
        var decodedAny = false
        defer {
            // The end of this read's packets (or of those before a pause): write what was routed to
            // idle writers, before the reader can suspend.
            state.directWrites?.perform(traffic: self.broker.traffic, logger: self.broker.logger, last: outbox)
        }
        while true {
            let packet: MQTTPacket
            do {
                guard let next = try state.decoder.next() else { return self.holdUnfinished(state) }
                packet = next
                if !decodedAny, state.session != nil { watch.touch() }
                decodedAny = true
            } catch {
                if state.session == nil, case .unsupportedProtocolLevel = error {
                    _ = outbox.enqueue(
                        .packet(.connack(MQTTConnAckPacket(returnCode: .unacceptableProtocolVersion))),
                        droppable: false
                    )
                    return .close(.refused(.unacceptableProtocolVersion))
                }
                if case .packetTooLarge(let size) = error {
                    return .close(
                        .protocolViolation(
                            "packet of \(size) bytes exceeds the maximum packet size of \(self.configuration.maximumPacketSize)"
                        )
                    )
                }
                return .close(.protocolViolation("\(error)"))
            }
            switch packet {
            case .subscribe, .unsubscribe:
                state.directWrites?.performOthers(traffic: self.broker.traffic, logger: self.broker.logger, own: outbox)
            default:
                break
            }
            // A decoding error behind the SUBSCRIBE stays in the decoder, which throws it again.
            if case .subscribe(let subscribe) = packet, let session = state.session,
                state.decoder.nextPacketType == .publish, case .publish(let publish)? = try? state.decoder.next()
            {
                if let reason = self.handle(subscribe, then: publish, session: session, state: state, outbox: outbox) {
                    return .close(reason)
                }
            } else if let reason = self.handle(packet, state: state, outbox: outbox, watch: watch) {
                return .close(reason)
            }
            if !state.congestedSessions.isEmpty || !state.congestedConnections.isEmpty { return .pace }
            if outbox.needsRoom { return .waitForWriter }
        }
    }

    /// Counts the bytes of the unfinished packet the decoder holds in the broker-wide total; closes the
    /// connection if its growth takes the total beyond ``MQTTBroker/Configuration/maximumUnfinishedPacketBytes``.
    private func holdUnfinished(_ state: ReaderState) -> ReaderStep? {
        let held = state.decoder.bufferedByteCount
        let growth = held - state.heldBytes
        guard growth != 0 else { return nil }
        state.heldBytes = held
        let total = self.broker.unfinishedPacketBytes.add(growth, ordering: .relaxed).newValue
        let limit = max(self.configuration.maximumUnfinishedPacketBytes, self.configuration.maximumPacketSize)
        guard growth > 0, total > limit else { return nil }
        return .close(.overLimit("unfinished packets of all clients would hold \(total) bytes, over \(limit)"))
    }

    /// Handles one packet; returns a reason to close, or `nil` to go on.
    private func handle(
        _ packet: MQTTPacket,
        state: ReaderState,
        outbox: Outbox,
        watch: ActivityWatch
    ) -> CloseReason? {
        guard let session = state.session else {
            guard case .connect(let connect) = packet else {
                return .protocolViolation("first packet is \(packet.type), not CONNECT")
            }
            return self.handleConnect(connect, state: state, outbox: outbox, watch: watch)
        }
        switch packet {
        case .connect:
            return .protocolViolation("second CONNECT")
        case .connack, .suback, .unsuback, .pingresp:
            return .protocolViolation("\(packet.type) is a server-to-client packet")
        case .publish(let publish):
            return self.handlePublish(publish, session: session, state: state, outbox: outbox)
        case .puback(let packetID):
            return self.acknowledge(state) { $0.puback(session, packetID: packetID, into: &$1) }
        case .pubrec(let packetID):
            return self.acknowledge(state) { $0.pubrec(session, packetID: packetID, into: &$1) }
        case .pubcomp(let packetID):
            return self.acknowledge(state) { $0.pubcomp(session, packetID: packetID, into: &$1) }
        case .pubrel(let packetID):
            return self.broker.core.withLock { core in
                core.sessions.release(session, packetID: packetID)
                return Self.reply(.pubcomp(packetID), on: outbox, state: state)
            }
        case .subscribe(let subscribe):
            return self.handleSubscribe(subscribe, session: session, state: state, outbox: outbox)
        case .unsubscribe(let unsubscribe):
            guard unsubscribe.filters.allSatisfy(SubscriptionTrie.admits) else {
                return Self.tooManyLevels("topic filter")
            }
            self.broker.logger.debug(
                "unsubscribe",
                metadata: ["client": state.clientID ?? "", "filters": unsubscribe.filters.joined(separator: ",")]
            )
            let reason = self.broker.core.withLock { core in
                core.sessions.unsubscribe(session, from: unsubscribe.filters)
                return Self.reply(.unsuback(unsubscribe.packetID), on: outbox, state: state)
            }
            if reason == nil {
                self.broker.emit(.unsubscribed(clientID: state.clientID ?? "", filters: unsubscribe.filters))
            }
            return reason
        case .pingreq:
            return Self.reply(.pingresp, on: outbox, state: state)
        case .disconnect:
            self.broker.core.withLock { $0.sessions.discardWill(of: self.id) }
            return .disconnected
        }
    }

    /// Checks a CONNECT's user name and password; returns the CONNACK code that refuses it, or `nil`.
    ///
    /// A client with a user name must match ``MQTTBroker/Configuration/credentials`` or a user of
    /// ``MQTTBroker/Configuration/passwordFile`` when either is set (code 4 otherwise); one without a
    /// user name needs ``MQTTBroker/Configuration/allowsAnonymousClients`` (code 5 otherwise).
    private func authenticate(_ connect: MQTTConnectPacket) -> MQTTConnectReturnCode? {
        let configuration = self.configuration
        guard let username = connect.username else {
            return configuration.allowsAnonymousClients ? nil : .notAuthorized
        }
        guard configuration.credentials != nil || configuration.passwordFile != nil else { return nil }
        guard let password = connect.password else { return .badUsernameOrPassword }
        if let credentials = configuration.credentials,
            PasswordHash.constantTimeEquals(Array(username.utf8), Array(credentials.username.utf8))
                && PasswordHash.constantTimeEquals(password, Array(credentials.password.utf8))
        {
            return nil
        }
        if let passwordFile = configuration.passwordFile,
            passwordFile.authenticates(username: username, password: password)
        {
            return nil
        }
        return .badUsernameOrPassword
    }

    /// Closes a connection that sent a topic or filter deeper than the broker admits (see
    /// ``SubscriptionTrie/maximumLevels``), as mosquitto does. The topic is not quoted: it may be 64 KiB.
    static func tooManyLevels(_ what: String) -> CloseReason {
        .protocolViolation("\(what) with more than \(SubscriptionTrie.maximumLevels) levels")
    }

    private func acknowledge(
        _ state: ReaderState,
        _ body: (inout BrokerSessions, inout [BrokerSessions.Output]) -> BrokerSessions.AckResult
    ) -> CloseReason? {
        self.broker.core.withLock { core in
            let result = core.withOutputs(&state.directWrites) { core, outputs in body(&core.sessions, &outputs) }
            return result == .ok ? nil : .protocolViolation("acknowledgement of the wrong type")
        }
    }

    /// Queues a reply; a client whose unread bytes it would take past the bound is a slow consumer.
    /// The reader waits for the writer long before its own replies get there, so only messages for the
    /// client and a client that stopped reading do.
    static func reply(_ packet: MQTTPacket, on outbox: Outbox, state: ReaderState) -> CloseReason? {
        outbox.enqueue(.packet(packet), droppable: false, directWrites: &state.directWrites) == .overflow
            ? .slowConsumer(MQTTBroker.Core.slowConsumer(outbox)) : nil
    }

    private func handleConnect(
        _ connect: MQTTConnectPacket,
        state: ReaderState,
        outbox: Outbox,
        watch: ActivityWatch
    ) -> CloseReason? {
        let logger = self.broker.logger
        func refuse(_ code: MQTTConnectReturnCode) -> CloseReason {
            _ = outbox.enqueue(.packet(.connack(MQTTConnAckPacket(returnCode: code))), droppable: false)
            return .refused(code)
        }
        guard connect.protocolLevel == MQTTConnectPacket.protocolLevel311 else {
            return refuse(.unacceptableProtocolVersion)
        }
        if connect.clientID.isEmpty, !connect.cleanSession { return refuse(.identifierRejected) }
        if let code = self.authenticate(connect) {
            logger.notice(
                "client refused",
                metadata: [
                    "client": connect.clientID, "username": connect.username ?? "", "remote": self.remoteDescription,
                    "reason": code == .notAuthorized
                        ? "anonymous clients are not allowed" : "bad user name or password",
                ]
            )
            return refuse(code)
        }
        var will: BrokerMessage?
        if let connectWill = connect.will {
            guard TopicName.isValid(connectWill.topic) else {
                return .protocolViolation("invalid will topic '\(connectWill.topic)'")
            }
            guard SubscriptionTrie.admits(connectWill.topic) else { return Self.tooManyLevels("will topic") }
            will = BrokerMessage(
                topic: connectWill.topic,
                payload: connectWill.payload,
                qos: connectWill.qos.qualityOfService,
                retain: connectWill.retain
            )
        }
        let acl = self.configuration.accessControlList
        // Resolved outside the lock, unless the client id is only assigned under it.
        let resolvedAccess =
            connect.clientID.isEmpty ? nil : acl?.access(clientID: connect.clientID, username: connect.username)
        // The keep-alive runs from before the CONNACK can leave, so a client that sees it also sees
        // the deadline counted from then.
        watch.setLimit(connect.keepAliveSeconds == 0 ? nil : .milliseconds(Int(connect.keepAliveSeconds) * 1500))
        let (sessionID, clientID, access, discardedWill): (SessionID, String, ClientAccess?, Bool) = self.broker.core
            .withLock { core in
                // Assigned under the lock, so that the id is still free when the session is made.
                let clientID =
                    connect.clientID.isEmpty ? self.broker.assignClientID(unusedIn: core.sessions) : connect.clientID
                let access = resolvedAccess ?? acl?.access(clientID: clientID, username: connect.username)
                // mosquitto checks write access when it publishes the will; the rules cannot change meanwhile.
                var discardedWill = false
                if let access, let topic = will?.topic, !access.allows(.write, topic: TopicLevels(bytes: topic)) {
                    will = nil
                    discardedWill = true
                }
                var outputs: [BrokerSessions.Output] = []
                let (sessionPresent, session) = core.sessions.connect(
                    clientID: clientID,
                    cleanSession: connect.cleanSession,
                    will: will,
                    connection: self.id,
                    access: access,
                    into: &outputs
                )
                core.outboxes[self.id] = outbox
                _ = outbox.enqueue(
                    .packet(.connack(MQTTConnAckPacket(sessionPresent: sessionPresent))),
                    droppable: false,
                    directWrites: &state.directWrites
                )
                core.dispatch(outputs, directWrites: &state.directWrites)
                return (session, clientID, access, discardedWill)
            }
        state.session = sessionID
        state.clientID = clientID
        state.access = access
        if discardedWill {
            logger.notice(
                "will discarded: the client may not publish to its topic",
                metadata: ["client": clientID, "topic": connect.will?.topic ?? ""]
            )
        }
        self.broker.emit(
            .clientConnected(
                clientID: clientID,
                remoteAddress: self.remoteDescription,
                cleanSession: connect.cleanSession
            )
        )
        logger.info(
            "client connected",
            metadata: [
                "client": clientID, "remote": self.remoteDescription,
                "clean": "\(connect.cleanSession)", "keepAlive": "\(connect.keepAliveSeconds)",
            ]
        )
        return nil
    }

    /// What the checks before routing make of a PUBLISH.
    enum PublishAdmission {
        /// Route this message.
        case route(BrokerMessage)
        /// Handled without routing: a reason to close, or `nil` (a publication the access control
        /// list denies is dropped and, at QoS 1 or 2, acknowledged).
        case handled(CloseReason?)
    }

    /// Handles PUBLISH: checks it, routes it and acknowledges it.
    func handlePublish(
        _ publish: MQTTPublishPacket,
        session: SessionID,
        state: ReaderState,
        outbox: Outbox
    ) -> CloseReason? {
        switch self.admit(publish, state: state, outbox: outbox) {
        case .handled(let reason):
            return reason
        case .route(let message):
            return self.broker.core.withLock { core in
                self.route(message, of: publish, session: session, state: state, outbox: outbox, core: &core)
            }
        }
    }

    /// Checks a PUBLISH before it is routed, and logs it.
    func admit(_ publish: MQTTPublishPacket, state: ReaderState, outbox: Outbox) -> PublishAdmission {
        self.broker.traffic.receivedMessage()
        let clientID = state.clientID ?? ""
        // The codec checks the topic and flags; these guards keep the broker safe with any decoder.
        guard TopicName.isValid(publish.topic) else {
            return .handled(.protocolViolation("invalid topic '\(publish.topic)'"))
        }
        guard SubscriptionTrie.admits(publish.topic) else { return .handled(Self.tooManyLevels("topic")) }
        if publish.qos == .atMostOnce, publish.dup { return .handled(.protocolViolation("QoS 0 PUBLISH with DUP set")) }
        if publish.qos != .atMostOnce, publish.packetID == nil || publish.packetID == 0 {
            return .handled(.protocolViolation("QoS > 0 PUBLISH without a packet identifier"))
        }
        if let access = state.access, !access.allows(.write, topic: TopicLevels(publish.topic)) {
            // Dropped, yet acknowledged as mosquitto does, so the client does not resend it forever.
            self.broker.logger.notice(
                "publish denied by the access control list",
                metadata: ["client": clientID, "topic": publish.topic, "qos": "\(publish.qos.rawValue)"]
            )
            switch publish.qos {
            case .atMostOnce: return .handled(nil)
            case .atLeastOnce: return .handled(Self.reply(.puback(publish.packetID ?? 0), on: outbox, state: state))
            case .exactlyOnce: return .handled(Self.reply(.pubrec(publish.packetID ?? 0), on: outbox, state: state))
            }
        }
        self.broker.logger.debug(
            "publish",
            metadata: [
                "client": clientID, "topic": publish.topic, "qos": "\(publish.qos.rawValue)",
                "retain": "\(publish.retain)", "bytes": "\(publish.payload.count)",
            ]
        )
        return .route(
            BrokerMessage(
                topic: publish.topic,
                payload: publish.payload,
                qos: publish.qos.qualityOfService,
                retain: publish.retain
            )
        )
    }

    /// Routes an admitted PUBLISH with the broker's state locked, acknowledges it, and notes the
    /// receivers whose queues it found filling up. A QoS 0 PUBLISH goes to `subscribers` if given:
    /// what `BrokerSessions.subscribers(of:)` found for its topic under the same lock.
    func route(
        _ message: BrokerMessage,
        of publish: MQTTPublishPacket,
        to subscribers: BrokerSessions.Subscribers? = nil,
        session: SessionID,
        state: ReaderState,
        outbox: Outbox,
        core: inout MQTTBroker.Core
    ) -> CloseReason? {
        let reply: MQTTPacket? = core.withOutputs(&state.directWrites) { core, outputs in
            switch publish.qos {
            case .atMostOnce:
                let subscribers = subscribers ?? core.sessions.subscribers(of: message.topic)
                core.sessions.publish(message, to: subscribers, into: &outputs)
                return nil
            case .atLeastOnce:
                core.sessions.publish(message, into: &outputs)
                return .puback(publish.packetID ?? 0)
            case .exactlyOnce:
                let packetID = publish.packetID ?? 0
                if core.sessions.receiveQoS2(session, packetID: packetID) {
                    core.sessions.publish(message, into: &outputs)
                }
                return .pubrec(packetID)
            }
        }
        state.congestedSessions.formUnion(core.sessions.takeCongestedSessions())
        state.congestedConnections.formUnion(core.congestedConnections)
        core.congestedConnections = []
        return reply.flatMap { Self.reply($0, on: outbox, state: state) }
    }

    /// Detaches a connection whose reader and writer have ended: detaches its session (publishing the
    /// will unless the client disconnected), removes its outbox and reports.
    func detach(_ reason: CloseReason, state: ReaderState) {
        self.broker.unfinishedPacketBytes.subtract(state.heldBytes, ordering: .relaxed)
        state.heldBytes = 0
        let attached = state.session != nil
        let logger = self.broker.logger
        self.broker.core.withLock { core in
            var outputs: [BrokerSessions.Output] = []
            if attached {
                var graceful = false
                if case .disconnected = reason { graceful = true }
                core.sessions.connectionClosed(self.id, graceful: graceful, into: &outputs)
            }
            if let removed = core.outboxes.removeValue(forKey: self.id) {
                core.droppedQoS0 += removed.droppedCount
            }
            core.dispatch(outputs)
        }
        if let clientID = state.clientID {
            self.broker.emit(.clientDisconnected(clientID: clientID, reason: reason.description))
            switch reason {
            case .disconnected, .cancelled:
                logger.info("client disconnected", metadata: ["client": clientID, "reason": "\(reason)"])
            default:
                logger.notice("client dropped", metadata: ["client": clientID, "reason": "\(reason)"])
            }
        } else {
            logger.debug(
                "connection closed",
                metadata: ["remote": self.remoteDescription, "reason": "\(reason)"]
            )
        }
    }
}
