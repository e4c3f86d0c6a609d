import CoatyCore
import CoatyMQTTPackets
import CoatyTransport

extension MQTTClientStateMachine {
    /// An exchange awaiting an acknowledgement from the broker, by packet identifier.
    struct Exchange: Sendable, Equatable {
        enum Stage: Sendable, Equatable {
            /// A QoS 1 PUBLISH awaiting PUBACK.
            case awaitingPubAck
            /// A QoS 2 PUBLISH awaiting PUBREC.
            case awaitingPubRec
            /// A QoS 2 PUBLISH whose PUBREL was sent, awaiting PUBCOMP.
            case awaitingPubComp
            /// A SUBSCRIBE with this many topic filters, awaiting SUBACK.
            case awaitingSubAck(filterCount: Int)
            /// An UNSUBSCRIBE awaiting UNSUBACK.
            case awaitingUnsubAck

            var isPublish: Bool {
                switch self {
                case .awaitingPubAck, .awaitingPubRec, .awaitingPubComp: true
                case .awaitingSubAck, .awaitingUnsubAck: false
                }
            }

            /// The packet this stage waits for, for messages.
            var awaitedPacket: MQTTPacketType {
                switch self {
                case .awaitingPubAck: .puback
                case .awaitingPubRec: .pubrec
                case .awaitingPubComp: .pubcomp
                case .awaitingSubAck: .suback
                case .awaitingUnsubAck: .unsuback
                }
            }
        }

        var stage: Stage
        /// The task waiting for the acknowledgement; `nil` when nobody waits (requests made without
        /// waiting, a resumed session's resends, a cancelled waiter).
        var waiter: WaiterToken?
        /// When the exchange was put in flight, counted in exchanges: the watchdog's clock, and the
        /// order in which a persistent session sends its exchanges again.
        var sequence: UInt64
    }

    /// A QoS 1/2 publication waiting for a free slot in the in-flight window.
    struct WindowedPublication: Sendable {
        var waiter: WaiterToken
        var packet: MQTTPublishPacket
    }

    /// An outbound exchange of a persistent session, with the sequence in which it was first sent.
    struct SessionEntry: Sendable {
        var sequence: UInt64
        var exchange: MQTTSessionState.Exchange
    }

    /// The state of a connection whose CONNACK accepted it, while connected and while closing.
    struct Link: Sendable {
        /// Encoded packets not yet taken by the writer.
        var outbound: [UInt8] = []
        /// The writer, when it waits for packets.
        var writer: WaiterToken?
        /// How many tasks are handing over packets that should leave together (see
        /// ``MQTTClientStateMachine/holdWriter()``); while above 0, queueing wakes no writer.
        var writerHolds = 0
        /// Publishers (and the reader) waiting for the outbound buffer to drain below the high-water mark.
        var drainWaiters: [WaiterToken] = []
        /// Tasks waiting for the connection to close.
        var closedWaiters: [WaiterToken]

        var exchanges: [UInt16: Exchange] = [:]
        var publishesInFlight = 0
        var window: [WindowedPublication] = []
        var lastPacketID: UInt16 = 0
        var nextSequence: UInt64 = 0
        /// Identifiers of QoS 2 PUBLISHes received and delivered, awaiting PUBREL [MQTT-4.3.3-2].
        var receivedQoS2: Set<UInt16> = []
        /// With a persistent session: the outbound exchanges that are session state, by packet
        /// identifier. Always empty with a clean session.
        var session: [UInt16: SessionEntry] = [:]

        /// When the last packet was written, and when the last whole packet was received.
        var lastSent: Duration
        var lastReceived: Duration
        var isPingOutstanding = false

        /// The watchdog's marks: exchanges with a lower sequence existed at the look before last
        /// (`older`) and at the last look (`previous`).
        var olderMark: UInt64 = 0
        var previousMark: UInt64 = 0

        /// The next identifier not in use, skipping 0 on wrap [MQTT-2.3.1-2]; `nil` if all 65,535 are taken.
        mutating func allocatePacketID() -> UInt16? {
            guard self.exchanges.count < Int(UInt16.max) else { return nil }
            var candidate = self.lastPacketID
            while true {
                candidate = candidate == UInt16.max ? 1 : candidate + 1
                if self.exchanges[candidate] == nil {
                    self.lastPacketID = candidate
                    return candidate
                }
            }
        }

        /// Appends an encoded packet to the outbound buffer, leaving it unchanged if encoding fails.
        mutating func enqueue(_ packet: MQTTPacket) throws(MQTTEncodingError) {
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

        /// Takes the writer's token, so the shell wakes it; none while the writer is held.
        mutating func takeWriter() -> WaiterToken? {
            guard self.writerHolds == 0 else { return nil }
            defer { self.writer = nil }
            return self.writer
        }

        /// Puts an exchange in flight and returns it sequence.
        mutating func track(_ id: UInt16, stage: Exchange.Stage, waiter: WaiterToken?) {
            self.exchanges[id] = Exchange(stage: stage, waiter: waiter, sequence: self.nextSequence)
            self.nextSequence += 1
        }

        /// Queues a QoS 1/2 PUBLISH that has its identifier and puts it in flight (and, with a
        /// persistent session, in the session).
        mutating func send(
            _ packet: MQTTPublishPacket,
            id: UInt16,
            waiter: WaiterToken?,
            keepsSession: Bool
        ) throws(MQTTEncodingError) {
            try self.enqueue(.publish(packet))
            self.publishesInFlight += 1
            if keepsSession { self.session[id] = SessionEntry(sequence: self.nextSequence, exchange: .publish(packet)) }
            self.track(id, stage: packet.qos == .exactlyOnce ? .awaitingPubRec : .awaitingPubAck, waiter: waiter)
        }

        /// Starts a QoS 1/2 publication if the window has room; `false` if it is full.
        mutating func start(
            _ packet: MQTTPublishPacket,
            waiter: WaiterToken,
            maximumInFlight: Int,
            keepsSession: Bool
        ) throws(MQTTEncodingError) -> Bool {
            guard self.publishesInFlight < maximumInFlight, let id = self.allocatePacketID() else { return false }
            var packet = packet
            packet.packetID = id
            try self.send(packet, id: id, waiter: waiter, keepsSession: keepsSession)
            return true
        }

        /// Frees a publication's slot and starts queued publications that now fit.
        ///
        /// - Returns: Publications that failed to encode.
        mutating func releaseSlot(maximumInFlight: Int, keepsSession: Bool) -> [Resumption] {
            self.publishesInFlight -= 1
            var failed: [Resumption] = []
            while !self.window.isEmpty, self.publishesInFlight < maximumInFlight {
                let next = self.window.removeFirst()
                do {
                    guard
                        try self.start(
                            next.packet,
                            waiter: next.waiter,
                            maximumInFlight: maximumInFlight,
                            keepsSession: keepsSession
                        )
                    else {
                        self.window.insert(next, at: 0)
                        break
                    }
                } catch {
                    failed.append(
                        Resumption(
                            token: next.waiter,
                            result: .failure(TransportError(.invalidArgument, "\(error)", underlying: error))
                        )
                    )
                }
            }
            return failed
        }

        /// Queues the exchanges of a session resumed on this connection, ahead of anything new: the
        /// PUBLISHes again with DUP set and their identifiers, the PUBRELs again [MQTT-4.4.0-1]. Their
        /// callers belong to the earlier connection, so nobody waits for them here; they take in-flight
        /// slots until acknowledged, so new publications queue behind them.
        mutating func resume(_ state: MQTTSessionState) {
            for exchange in state.outbound {
                let id = exchange.packetID
                switch exchange {
                case .publish(var packet):
                    packet.dup = true
                    // It was encoded once already, so it encodes again.
                    try? self.send(packet, id: id, waiter: nil, keepsSession: true)
                case .release:
                    self.enqueueControl(.pubrel(id))
                    self.publishesInFlight += 1
                    self.session[id] = SessionEntry(sequence: self.nextSequence, exchange: exchange)
                    self.track(id, stage: .awaitingPubComp, waiter: nil)
                }
                self.lastPacketID = id
            }
            self.receivedQoS2 = state.receivedQoS2
        }

        /// The session's state as the connection ends: what it still has to send again, in order.
        func remainingSession() -> MQTTSessionState {
            MQTTSessionState(
                outbound: self.session.values.sorted { $0.sequence < $1.sequence }.map(\.exchange),
                receivedQoS2: self.receivedQoS2
            )
        }
    }

    /// The state of a connection that queued its DISCONNECT.
    struct Closing: Sendable {
        /// Whether the writer has written everything up to and including the DISCONNECT.
        var isDisconnectWritten = false
        /// Tasks waiting until it is.
        var flushWaiters: [WaiterToken] = []
    }

    /// The state of a connection that has closed or failed.
    struct Closed: Sendable {
        var failure: TransportError
        /// With a persistent session: what is left of it.
        var sessionLeft: MQTTSessionState
    }

    /// The state of a connection that sent or is sending its CONNECT.
    struct Handshake: Sendable {
        /// When the CONNECT was written.
        var connectSent: Duration?
        /// Tasks waiting for the connection to close.
        var closedWaiters: [WaiterToken] = []
    }
}
