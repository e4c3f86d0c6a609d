import CoatyCore
import CoatyMQTTPackets
import CoatySockets
import CoatyTransport
import Synchronization

extension MQTTConnection {
    /// The largest socket read the reactor's thread hands to the reader's packet handling (see
    /// ``runReader(decoder:)``); over TLS, in encrypted bytes. A request, a response or an
    /// acknowledgement fits; a larger read goes to the reader's task.
    static let inlineReadLimit = 2_048

    /// Reads packets and hands them to the machine until the connection fails or the task is cancelled.
    ///
    /// The whole packets of each read go to the machine in one event. While the outbound buffer is
    /// above the high-water mark (acknowledgements the broker does not read), the reader stops reading,
    /// so TCP's flow control slows the broker instead of our memory growing.
    ///
    /// Over TCP and TLS, while the task waits for bytes, the reactor's thread handles a small read
    /// itself (``DirectByteStream/read(maxBytes:handlingUpTo:_:)``): it decodes the packets and
    /// delivers the messages, so a response reaches the application without waking the reader's
    /// task first, which on a request's round trip was a thread switch per message received. What
    /// must wait (room in the outbound buffer) or end the connection goes back to the task.
    func runReader(decoder: MQTTPacketDecoder) async {
        let reader = Reader(decoder: decoder)
        do {
            var step = self.handleBuffered(reader)
            while true {
                switch step {
                case .stop:
                    self.end(reader)
                    return
                case .waitForDrain:
                    try await self.wait { $0.waitForDrain($1, whileClosing: true) }
                case .readMore:
                    break
                }
                step = try await self.readAndHandle(reader)
            }
        } catch {
            self.fail(self.lost(error))
        }
    }

    /// Waits for the next read and handles it: on the reactor's thread if small (see
    /// ``runReader(decoder:)``), else here.
    private func readAndHandle(_ reader: Reader) async throws -> ReaderStep {
        let bytes: [UInt8]
        if let direct = self.directSocket {
            reader.inlineStep = .readMore
            let outcome = try await direct.read(maxBytes: 1 << 16, handlingUpTo: Self.inlineReadLimit) { read in
                reader.decoder.append(read)
                reader.inlineStep = self.handleBuffered(reader)
                return reader.inlineStep == .readMore
            }
            guard case .bytes(let read) = outcome else { return reader.inlineStep }
            bytes = read
        } else {
            bytes = try await self.socket.read()
        }
        guard !bytes.isEmpty else {
            throw TransportError(.connectionLost, "\(self.broker) closed the connection")
        }
        reader.decoder.append(bytes)
        return self.handleBuffered(reader)
    }

    /// Decodes the whole packets buffered, feeds them to the machine, delivers the messages and
    /// performs what the machine asks, except ending the connection, which it leaves in `reader` for
    /// the task (``end(_:)``). Runs on the reader's task or the reactor's thread, never both at once.
    private func handleBuffered(_ reader: Reader) -> ReaderStep {
        var malformed: MQTTDecodingError?
        do {
            while let packet = try reader.decoder.next() { reader.packets.append(packet) }
        } catch {
            malformed = error
        }
        let now = reader.packets.isEmpty ? .zero : self.clock.now
        self.machine.withLock { $0.received(reader.packets, at: now, into: &reader.actions) }
        reader.packets.removeAll(keepingCapacity: true)
        for message in reader.actions.deliveries { self.onMessage(message) }
        self.wake(reader.actions.wakeWriter)
        self.resume(reader.actions.resumptions)
        let (closure, isBacklogged) = (reader.actions.closure, reader.actions.isBacklogged)
        reader.actions.reset()  // lets go of the messages, keeps the arrays' storage for the next read
        if closure != nil || malformed != nil {
            reader.ending = (closure, malformed)
            return .stop
        }
        return isBacklogged ? .waitForDrain : .readMore
    }

    /// Ends the connection as ``handleBuffered(_:)`` found it must: a closure the machine decided, or
    /// a malformed packet.
    private func end(_ reader: Reader) {
        guard let (closure, malformed) = reader.ending else { return }
        if let closure {
            self.configuration.effectiveLogger.error("\(closure.failure.message)")
            self.perform(closure)
        } else if let malformed {
            self.configuration.effectiveLogger.error("malformed packet from \(self.broker): \(malformed)")
            self.fail(
                TransportError(
                    .protocolViolation,
                    "malformed packet from \(self.broker): \(malformed)",
                    underlying: malformed
                )
            )
        }
    }

    /// Maps an I/O error to the connection's failure.
    func lost(_ error: any Error) -> TransportError {
        if let error = error as? TransportError { return error }
        if error is CancellationError { return TransportError(.connectionClosed, "the connection was cancelled") }
        return TransportError(.connectionLost, "lost the connection to \(self.broker)", underlying: error)
    }
}

/// What the reader does after handling what is buffered.
private enum ReaderStep: Sendable {
    case readMore
    /// The outbound buffer is above the high-water mark: wait until it drains before reading more.
    case waitForDrain
    /// The connection ends (``MQTTConnection/end(_:)``).
    case stop
}

/// The reader's state: touched by the reader's task, or by the reactor's thread while the task waits
/// in ``DirectByteStream/read(maxBytes:handlingUpTo:_:)``, never by both at once (that read's
/// contract), hence unchecked.
private final class Reader: @unchecked Sendable {
    var decoder: MQTTPacketDecoder
    var packets: [MQTTPacket] = []
    var actions = MQTTClientStateMachine.ReceiveActions()
    /// What the last handling on the reactor's thread left the task to do.
    var inlineStep = ReaderStep.readMore
    /// Why the connection ends, once a handling found it must.
    var ending: (MQTTClientStateMachine.Closure?, MQTTDecodingError?)?

    init(decoder: MQTTPacketDecoder) {
        self.decoder = decoder
    }
}
