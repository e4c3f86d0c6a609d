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
// BROKER_FUZZ_TRACE=1 prints each step when replaying an input. The driver (`Harness`), its
// predictions and its invariant checks are in Support/.
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
let isTracing = getenv("BROKER_FUZZ_TRACE") != nil

func trace(_ message: @autoclosure () -> String) {
    guard isTracing else { return }
    let line = Array((message() + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

let clientIDs = ["a", "b", "c", "", "coaty-broker-1"]
let topics = ["t", "t/x", "u", "$s", "t/x/y", "", "t/+", "caf\u{E9}", "cafe\u{301}", "/"]
let filters = ["t", "t/#", "+", "#", "+/x", "$s", "u", "t/x", "$s/#", "a#", "", "t/+/y", "caf\u{E9}"]

/// What a client expects next from the broker, besides non-DUP PUBLISHes.
enum Expected: Equatable {
    case connack(MQTTConnAckPacket)
    case resendPublish(UInt16)
    case resendPubrel(UInt16)
    case packet(MQTTPacket)
}

/// The reference of one session.
struct ReferenceSession {
    var clientID: [UInt8]
    var isPersistent: Bool
    var subscriptions: [[UInt8]: QualityOfService] = [:]
    var connection: ConnectionID?
    /// Inbound QoS 2 packet ids received and not released.
    var inboundQoS2: Set<UInt16> = []

    /// The highest QoS among the subscriptions that match `topic`, or `nil` if none does.
    func grant(for topic: [UInt8]) -> QualityOfService? {
        var granted: QualityOfService?
        for (filter, qos) in self.subscriptions {
            guard let filter = try? TopicFilter(String(decoding: filter, as: UTF8.self)), filter.matches(bytes: topic)
            else { continue }
            granted = max(granted ?? qos, qos)
        }
        return granted
    }
}

/// Whether every filter of a SUBSCRIBE is valid and within the trie's levels, so that it does not close
/// the connection.
func isAdmitted(_ subscribe: MQTTSubscribePacket) -> Bool {
    subscribe.subscriptions.allSatisfy { (try? TopicFilter($0.filter)) != nil && SubscriptionTrie.admits($0.filter) }
}

/// A session's outbound QoS 1/2 messages so far (in flight, queued or dropped), and its newest one.
struct DeliveryCount: Equatable {
    var total: Int
    var newest: BrokerMessage?

    init(_ session: Session) {
        self.total = session.inFlight.count + session.pending.count + session.droppedMessages
        self.newest = session.pending.elements.last ?? session.inFlight.last?.message
    }
}

/// The socket of a connection the harness drives without one: `PacketHandler` never touches it, and
/// the harness writes and closes nothing through it.
final class NoSocket: ByteStreamConnection {
    var remoteDescription: String { "fuzz" }
    func read(maxBytes: Int) async throws -> [UInt8] { [] }
    func write(_ bytes: [UInt8]) async throws {}
    func write(contentsOf chunks: [[UInt8]]) async throws {}
    func noteExchange() {}
    func shutdownOutput() async {}
    func close() {}
    var isClosed: Bool { false }
}

final class Client {
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

// MARK: - Packets

func packetID(_ program: inout FuzzInput) -> UInt16 {
    let byte = program.next()
    return byte == 0xFF ? 0 : UInt16(byte % 8) + 1
}

func makePacket(_ kind: UInt8, program: inout FuzzInput, client: Client?) -> MQTTPacket {
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
func makeRequest(_ program: inout FuzzInput) -> [UInt8] {
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

func encoded(_ packet: MQTTPacket) -> [UInt8] {
    (try? packet.encoded()) ?? []
}

// MARK: - Entry point

func makeConfiguration(_ program: inout FuzzInput) -> MQTTBroker.Configuration {
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
