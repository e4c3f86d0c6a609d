import CoatyCore
import CoatyMQTTPackets
import CoatySockets
import CoatyTransport
import Synchronization

extension MQTTConnection {
    /// Reads packets and hands them to the machine until the connection fails or the task is cancelled.
    ///
    /// The whole packets of each read go to the machine in one event. While the outbound buffer is
    /// above the high-water mark (acknowledgements the broker does not read), the reader stops reading,
    /// so TCP's flow control slows the broker instead of our memory growing.
    func runReader(decoder: MQTTPacketDecoder) async {
        var decoder = decoder
        var packets: [MQTTPacket] = []
        var actions = MQTTClientStateMachine.ReceiveActions()
        do {
            while true {
                var malformed: MQTTDecodingError?
                do {
                    while let packet = try decoder.next() { packets.append(packet) }
                } catch {
                    malformed = error
                }
                let now = packets.isEmpty ? .zero : self.clock.now
                self.machine.withLock { $0.received(packets, at: now, into: &actions) }
                packets.removeAll(keepingCapacity: true)
                for message in actions.deliveries { self.onMessage(message) }
                self.wake(actions.wakeWriter)
                self.resume(actions.resumptions)
                let (closure, isBacklogged) = (actions.closure, actions.isBacklogged)
                actions.reset()  // lets go of the messages, keeps the arrays' storage for the next read
                if let closure {
                    self.configuration.effectiveLogger.error("\(closure.failure.message)")
                    self.perform(closure)
                    return
                }
                if let malformed {
                    self.configuration.effectiveLogger.error("malformed packet from \(self.broker): \(malformed)")
                    self.fail(
                        TransportError(
                            .protocolViolation,
                            "malformed packet from \(self.broker): \(malformed)",
                            underlying: malformed
                        )
                    )
                    return
                }
                if isBacklogged { try await self.wait { $0.waitForDrain($1, whileClosing: true) } }
                let bytes = try await self.socket.read()
                guard !bytes.isEmpty else {
                    throw TransportError(.connectionLost, "\(self.broker) closed the connection")
                }
                decoder.append(bytes)
            }
        } catch {
            self.fail(self.lost(error))
        }
    }

    /// Maps an I/O error to the connection's failure.
    func lost(_ error: any Error) -> TransportError {
        if let error = error as? TransportError { return error }
        if error is CancellationError { return TransportError(.connectionClosed, "the connection was cancelled") }
        return TransportError(.connectionLost, "lost the connection to \(self.broker)", underlying: error)
    }
}
