// What handling a packet should do, predicted from the reference, and the checks of what it did.
import CoatyCore
import CoatyMQTTPackets
import CoatySockets
import Synchronization

extension Harness {
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
                if let granted = session.grant(for: topic) {
                    prediction.deliveries[id] = min(publish.qos.qualityOfService, granted)
                }
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
                    valid = isAdmitted(subscribe)
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
}
