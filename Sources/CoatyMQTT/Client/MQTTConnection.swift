package import CoatyCore
import CoatyMQTTPackets
import CoatySockets
package import CoatyTransport
import Synchronization

/// One open MQTT 3.1.1 connection: a reader, a writer, a keep-alive timer and an acknowledgement
/// watchdog over a TCP or WebSocket connection.
///
/// ## Concurrency
///
/// All decisions are made by an ``MQTTClientStateMachine`` behind one `Mutex`: this class only feeds it
/// events (packets read, publications and requests made, writes finished, clock ticks, cancellations)
/// and performs the actions it returns, after releasing the lock. Tasks wait in a `WaiterRegistry`
/// under the tokens the machine names. Four loops run as child tasks of ``MQTTTransport``'s task group:
/// - the **reader** (`MQTTConnection+Reader.swift`) decodes packets and hands them to the machine;
///   over TCP and TLS the reactor's thread does this for a small read while the reader waits;
/// - the **writer** (`MQTTConnection+Writer.swift`) takes everything queued in the outbound buffer and
///   writes it with one system call, so packets queued while a write is in progress are coalesced.
///   Over TCP and TLS, a task that queues a packet while the writer waits sends it itself instead of
///   waking the writer, as long as the socket takes it at once (see ``wake(_:)``);
/// - the **keep-alive** loop and the **acknowledgement watchdog** (`MQTTConnection+KeepAlive.swift`)
///   tick the machine at the instants it asks for, on the configured clock.
///
/// The first failure (I/O error, EOF, malformed packet, protocol violation, missing PINGRESP, overdue
/// acknowledgement) closes the socket and fails every pending and later operation.
package final class MQTTConnection: TransportConnection, Sendable {
    let socket: any ByteStreamConnection
    /// The socket, when it can send from any thread without waiting (TCP, TLS): see ``wake(_:)``.
    let directSocket: (any DirectByteStream)?
    /// Bytes a direct send left over (``DirectByteStream/sendWithoutWaiting(_:)``), for the writer
    /// to send first when it is woken.
    let leftover = Mutex<[UInt8]>([])
    let configuration: MQTTTransport.Configuration
    let broker: MQTTBrokerAddress
    let onMessage: @Sendable (TransportMessage) -> Void
    let machine: Mutex<MQTTClientStateMachine>
    let waiters = WaiterRegistry()
    let clock: ElapsedClock

    init(
        socket: any ByteStreamConnection,
        broker: MQTTBrokerAddress,
        configuration: MQTTTransport.Configuration,
        onMessage: @escaping @Sendable (TransportMessage) -> Void
    ) {
        self.socket = socket
        self.directSocket = socket as? any DirectByteStream
        self.broker = broker
        self.configuration = configuration
        self.onMessage = onMessage
        self.clock = ElapsedClock(configuration.clock)
        self.machine = Mutex(
            MQTTClientStateMachine(
                broker: broker,
                keepsSession: !configuration.cleanSession,
                maximumInFlight: configuration.maximumInFlight,
                keepAlive: .seconds(Int(configuration.keepAliveSeconds)),
                acknowledgementTimeout: configuration.acknowledgementTimeout
            )
        )
    }

    /// The failure that ended the connection, if any.
    package var failure: TransportError? { self.machine.withLock { $0.failure } }

    // MARK: - Persistent session

    /// Queues what a resumed persistent session has to send again, before anything new; call after
    /// the handshake, before the writer starts.
    func resume(_ session: MQTTSessionState) {
        self.machine.withLock { $0.resumeSession(session) }
    }

    /// With a persistent session: what is left of it once the connection has ended (empty before).
    var sessionLeft: MQTTSessionState { self.machine.withLock { $0.sessionLeft } }

    // MARK: - TransportConnection

    package func publish(_ message: TransportMessage) async throws {
        let packet = try Self.packet(for: message)
        self.socket.noteExchange()
        if packet.qos == .atMostOnce {
            while try !self.queue({ $0.publishAtMostOnce(packet) }) {
                try await self.wait { $0.waitForDrain($1) }
            }
        } else {
            try await self.request { $0.publish(packet, waiter: $1) }
        }
    }

    /// Queues a QoS 0 message for the writer; a QoS 1 or 2 message, which waits for its
    /// acknowledgement, and a full outbound buffer return `false`.
    package func publishWithoutWaiting(_ message: TransportMessage) throws -> Bool {
        let packet = try Self.packet(for: message)
        self.socket.noteExchange()
        return packet.qos == .atMostOnce ? try self.queue { $0.publishAtMostOnce(packet) } : false
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

    package func subscribe(to filters: [TopicFilter]) async throws {
        try await self.subscribe(to: filters, qos: self.configuration.subscriptionQoS)
    }

    /// Subscribes to topic filters at a maximum QoS and waits for the SUBACK.
    ///
    /// - Throws: `TransportError` `.subscriptionRefused` if the broker answers 0x80 for any filter;
    ///   the connection's failure if it is closed or lost; `CancellationError`.
    package func subscribe(to filters: [TopicFilter], qos: QualityOfService) async throws {
        guard !filters.isEmpty else { return }
        try await self.request { $0.subscribe(to: filters, qos: MQTTQoS(qos), waiter: $1) }
    }

    package func unsubscribe(from filters: [TopicFilter]) async throws {
        guard !filters.isEmpty else { return }
        try await self.request { $0.unsubscribe(from: filters, waiter: $1) }
    }

    /// Queues a SUBSCRIBE at the configured subscription QoS and wakes the writer, without waiting
    /// for the SUBACK. Returns `false` when the outbound buffer is full or no packet identifier is
    /// free. A refusal in the SUBACK has no one to report to, as in coaty-js.
    package func subscribeWithoutWaiting(to filters: [TopicFilter]) throws -> Bool {
        guard !filters.isEmpty else { return true }
        let qos = MQTTQoS(self.configuration.subscriptionQoS)
        return try self.queue { $0.subscribe(to: filters, qos: qos, waiter: nil) }
    }

    /// Queues an UNSUBSCRIBE and wakes the writer, without waiting for the UNSUBACK. Returns `false`
    /// when the outbound buffer is full or no packet identifier is free.
    package func unsubscribeWithoutWaiting(from filters: [TopicFilter]) throws -> Bool {
        guard !filters.isEmpty else { return true }
        return try self.queue { $0.unsubscribe(from: filters, waiter: nil) }
    }

    /// Holds the writer while `body` queues packets, so that they go out in one write.
    package func coalescingWrites<Result>(_ body: () throws -> Result) rethrows -> Result {
        self.machine.withLock { $0.holdWriter() }
        defer { self.wake(self.machine.withLock { $0.releaseWriter() }) }
        return try body()
    }

    /// Suspends until the connection is closed or lost, or the calling task is cancelled.
    package func waitUntilClosed() async {
        try? await self.wait { $0.waitUntilClosed($1) }
    }

    // MARK: - Feeding the machine

    /// Feeds an event that queues a packet nobody waits for, and wakes the writer.
    ///
    /// - Returns: Whether the packet was queued; `false` when the outbound buffer is full.
    private func queue(_ event: (inout MQTTClientStateMachine) -> MQTTClientStateMachine.EnqueueAction) throws -> Bool {
        switch self.machine.withLock({ event(&$0) }) {
        case .queued(let writer):
            self.wake(writer)
            return true
        case .full, .waitingForWindow:
            return false
        case .failed(let error):
            throw error
        }
    }

    /// Feeds an event that queues an exchange, and waits until the machine resumes its token (on the
    /// acknowledgement, or when the connection fails) or the task is cancelled. A cancelled task's
    /// exchange stays on the wire; one still waiting for the in-flight window is dropped.
    private func request(
        _ event: (inout MQTTClientStateMachine, WaiterToken) -> MQTTClientStateMachine.EnqueueAction
    ) async throws {
        try Task.checkCancellation()
        let token = self.waiters.makeToken()
        switch self.machine.withLock({ event(&$0, token) }) {
        case .queued(let writer):
            self.wake(writer)
        case .waitingForWindow:
            break
        case .full:
            // Not returned for an exchange with a waiter.
            self.waiters.discard(token)
            throw TransportError(.invalidArgument, "the request could not be queued")
        case .failed(let error):
            self.waiters.discard(token)
            throw error
        }
        try await self.waiters.wait(token) { self.machine.withLock { $0.cancel(token) } }
    }

    /// Registers a waiter through `register` and waits until the machine resumes it or the task is
    /// cancelled.
    ///
    /// - Throws: The error the machine fails the waiter with; `CancellationError`.
    func wait(_ register: (inout MQTTClientStateMachine, WaiterToken) -> MQTTClientStateMachine.WaitAction) async throws
    {
        let token = self.waiters.makeToken()
        switch self.machine.withLock({ register(&$0, token) }) {
        case .wait:
            try await self.waiters.wait(token) { self.machine.withLock { $0.cancel(token) } }
        case .ready:
            self.waiters.discard(token)
        case .failed(let error):
            self.waiters.discard(token)
            throw error
        }
    }

    /// Gets what is queued written when the machine names the waiting writer: by the calling task,
    /// when the socket can take it at once, else by waking the writer.
    ///
    /// The token makes the caller the connection's only writer: the machine hands it out once, and
    /// until it is given back (``MQTTClientStateMachine/writerWaits(_:)``) or the writer is woken
    /// with it, queueing names no writer. Sending from here saves waking the writer's task for each
    /// packet, which on a request and its response is a thread switch per message.
    func wake(_ writer: WaiterToken?) {
        guard let writer else { return }
        guard let direct = self.directSocket else {
            self.waiters.resume(writer)
            return
        }
        var batch: [UInt8] = []
        while true {
            switch self.machine.withLock({ $0.takeOutbound(swapping: &batch) }) {
            case .stop:
                self.waiters.resume(writer)
                return
            case .idle:
                // Given back to the machine, unless something was queued since: then go on.
                guard case .ready = self.machine.withLock({ $0.writerWaits(writer) }) else { return }
            case .write(let drained):
                for token in drained { self.waiters.resume(token) }
                let left = direct.sendWithoutWaiting(batch)
                guard left.isEmpty else {
                    // The writer sends the rest first; nothing else is written before it runs.
                    self.leftover.withLock { $0 = left }
                    self.waiters.resume(writer)
                    return
                }
                self.noteWritten()
                batch.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Resumes the waiters named by the machine.
    func resume(_ resumptions: [MQTTClientStateMachine.Resumption]) {
        for resumption in resumptions {
            self.waiters.resume(resumption.token, with: resumption.result.mapError { $0 })
        }
    }
}
