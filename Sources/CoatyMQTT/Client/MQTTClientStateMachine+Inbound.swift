import CoatyCore
import CoatyMQTTPackets
import CoatyTransport

extension MQTTClientStateMachine {
    // MARK: - Session

    /// Queues what a resumed persistent session has to send again, ahead of anything new; call after
    /// the CONNACK, before the writer starts.
    mutating func resumeSession(_ session: MQTTSessionState) {
        self.withLink(whileClosing: false) { link, _ in link.resume(session) }
    }

    // MARK: - Packets

    /// Handles the whole packets of one read, in order.
    ///
    /// Only whole packets prove the broker alive to the keep-alive. A QoS 1/2 message's acknowledgement
    /// is queued before the message is delivered, so that it goes out before anything the receiver does
    /// in response (a receiver that closes the connection at once queues its DISCONNECT behind it,
    /// instead of ahead of it, where the acknowledgement would be dropped). The writer is woken after
    /// the deliveries, so that it takes acknowledgements in batches.
    mutating func received(_ packets: [MQTTPacket], at now: Duration) -> ReceiveActions {
        var actions = ReceiveActions()
        self.received(packets, at: now, into: &actions)
        return actions
    }

    /// ``received(_:at:)`` into actions the caller reuses from read to read, to spare the allocations;
    /// `actions` is reset first.
    mutating func received(_ packets: [MQTTPacket], at now: Duration, into actions: inout ReceiveActions) {
        actions.reset()
        let (maximumInFlight, keepsSession, broker) = (self.maximumInFlight, self.keepsSession, self.broker)
        let violation = self.withLink { link, isClosing -> TransportError? in
            defer {
                actions.isBacklogged = link.outbound.count >= Self.outboundHighWater
                if !link.outbound.isEmpty { actions.wakeWriter = link.takeWriter() }
            }
            guard !packets.isEmpty else { return nil }
            link.lastReceived = now
            link.isPingOutstanding = false
            let inbound = Inbound(
                canSend: !isClosing,
                maximumInFlight: maximumInFlight,
                keepsSession: keepsSession,
                broker: broker
            )
            for packet in packets {
                do throws(TransportError) {
                    try inbound.handle(packet, on: &link, into: &actions)
                } catch {
                    return error
                }
            }
            return nil
        }
        if let violation = violation ?? nil { actions.closure = self.fail(violation) }
    }
}

/// How received packets change a link: the body of ``MQTTClientStateMachine/received(_:at:)``.
private struct Inbound {
    typealias Machine = MQTTClientStateMachine

    /// `false` once DISCONNECT is queued: acknowledgements are dropped.
    let canSend: Bool
    let maximumInFlight: Int
    let keepsSession: Bool
    let broker: MQTTBrokerAddress

    func handle(
        _ packet: MQTTPacket,
        on link: inout Machine.Link,
        into actions: inout Machine.ReceiveActions
    ) throws(TransportError) {
        switch packet {
        case .publish(let publish):
            try self.receive(publish, on: &link, into: &actions)
        case .puback(let id):
            try self.complete(id, by: .puback, on: &link, into: &actions)
        case .pubrec(let id):
            switch link.exchanges[id]?.stage {
            case .awaitingPubRec, .awaitingPubComp:
                // A duplicate PUBREC gets the PUBREL again.
                link.exchanges[id]?.stage = .awaitingPubComp
                if let entry = link.session[id] {
                    link.session[id] = Machine.SessionEntry(sequence: entry.sequence, exchange: .release(id))
                }
                if self.canSend { link.enqueueControl(.pubrel(id)) }
            case .some:
                throw self.violation("PUBREC for packet \(id), which is not a QoS 2 publication")
            case nil:
                break
            }
        case .pubcomp(let id):
            try self.complete(id, by: .pubcomp, on: &link, into: &actions)
        case .pubrel(let id):
            link.receivedQoS2.remove(id)
            if self.canSend { link.enqueueControl(.pubcomp(id)) }
        case .suback(let suback):
            try self.complete(suback.packetID, by: .suback, returnCodes: suback.returnCodes, on: &link, into: &actions)
        case .unsuback(let id):
            try self.complete(id, by: .unsuback, on: &link, into: &actions)
        case .pingresp:
            break  // every whole packet ends the wait for a PINGRESP
        case .connect, .connack, .subscribe, .unsubscribe, .pingreq, .disconnect:
            throw self.violation("unexpected \(packet.type) from the broker")
        }
    }

    private func receive(
        _ publish: MQTTPublishPacket,
        on link: inout Machine.Link,
        into actions: inout Machine.ReceiveActions
    ) throws(TransportError) {
        let message = TransportMessage(
            topic: publish.topic,
            payload: publish.payload,
            qos: publish.qos.qualityOfService,
            retain: publish.retain
        )
        switch publish.qos {
        case .atMostOnce:
            actions.deliveries.append(message)
        case .atLeastOnce:
            guard let id = publish.packetID else { throw self.violation("QoS 1 PUBLISH without identifier") }
            if self.canSend { link.enqueueControl(.puback(id)) }
            actions.deliveries.append(message)
        case .exactlyOnce:
            guard let id = publish.packetID else { throw self.violation("QoS 2 PUBLISH without identifier") }
            let isNew = link.receivedQoS2.insert(id).inserted
            if self.canSend { link.enqueueControl(.pubrec(id)) }
            if isNew { actions.deliveries.append(message) }
        }
    }

    /// Completes the exchange `id` on its final acknowledgement; one nobody awaits is ignored.
    private func complete(
        _ id: UInt16,
        by type: MQTTPacketType,
        returnCodes: [MQTTSubAckReturnCode] = [],
        on link: inout Machine.Link,
        into actions: inout Machine.ReceiveActions
    ) throws(TransportError) {
        guard let exchange = link.exchanges[id] else { return }
        switch (exchange.stage, type) {
        case (.awaitingPubAck, .puback), (.awaitingPubComp, .pubcomp), (.awaitingUnsubAck, .unsuback):
            break
        case (.awaitingSubAck(let count), .suback):
            guard count == returnCodes.count else {
                throw self.violation("SUBACK with \(returnCodes.count) return codes for \(count) topic filters")
            }
        case (.awaitingPubRec, .pubcomp):
            throw self.violation("PUBCOMP for packet \(id) before PUBREC")
        default:
            throw self.violation("\(type) for packet \(id), which awaits a different acknowledgement")
        }
        link.exchanges[id] = nil
        if exchange.stage.isPublish {
            if self.keepsSession { link.session[id] = nil }
            actions.resumptions += link.releaseSlot(
                maximumInFlight: self.maximumInFlight,
                keepsSession: self.keepsSession
            )
        }
        guard let waiter = exchange.waiter else { return }
        if returnCodes.contains(.failure) {
            let error = TransportError(.subscriptionRefused, "the broker refused a subscription (SUBACK 0x80)")
            actions.resumptions.append(.init(token: waiter, result: .failure(error)))
        } else {
            actions.resumptions.append(.init(token: waiter, result: .success(())))
        }
    }

    private func violation(_ message: String) -> TransportError {
        TransportError(.protocolViolation, "protocol violation by \(self.broker): \(message)")
    }
}
