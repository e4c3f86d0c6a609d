import CoatyCore
import CoatyMQTTPackets
import CoatySockets
import CoatyTransport
import Synchronization

extension MQTTConnection {
    /// Sends CONNECT and waits for CONNACK.
    ///
    /// - Returns: A decoder holding any bytes received after the CONNACK, for the reader, and whether
    ///   the broker kept a session for the client (CONNACK's session present flag).
    /// - Throws: `TransportError` `.connectionRefused` (non-zero return code), `.protocolViolation`,
    ///   `.connectFailed` (with an `MQTTHandshakeFailure` as its cause); `CancellationError`. The
    ///   connection is closed when this throws.
    func handshake(_ connect: MQTTConnectPacket) async throws -> (MQTTPacketDecoder, sessionPresent: Bool) {
        do {
            return try await self.exchangeConnect(connect)
        } catch let error as TransportError {
            self.fail(error)
            throw error
        } catch {
            self.fail(TransportError(.connectionClosed, "the handshake was cancelled"))
            throw error
        }
    }

    private func exchangeConnect(_ connect: MQTTConnectPacket) async throws -> (MQTTPacketDecoder, sessionPresent: Bool)
    {
        let bytes: [UInt8]
        do {
            bytes = try MQTTPacket.connect(connect).encoded()
        } catch {
            throw TransportError(.invalidArgument, "cannot encode CONNECT: \(error)", underlying: error)
        }
        do {
            try await self.socket.write(bytes)
        } catch let error as CancellationError {
            throw error
        } catch {
            throw TransportError(
                .connectFailed,
                "cannot send CONNECT to \(self.broker)",
                underlying: MQTTHandshakeFailure(cause: error)
            )
        }
        let sent = self.clock.now
        self.machine.withLock { $0.connectWritten(at: sent) }
        var decoder = MQTTPacketDecoder(maximumPacketSize: self.configuration.maximumPacketSize)
        while true {
            let packet: MQTTPacket?
            do {
                packet = try decoder.next()
            } catch {
                throw TransportError(
                    .protocolViolation,
                    "malformed packet instead of CONNACK: \(error)",
                    underlying: error
                )
            }
            if let packet {
                let now = self.clock.now
                switch self.machine.withLock({ $0.handshakeReceived(packet, at: now) }) {
                case .accepted(let sessionPresent):
                    return (decoder, sessionPresent)
                case .failed(let closure):
                    self.perform(closure)
                    throw closure.failure
                }
            }
            let chunk: [UInt8]
            do {
                chunk = try await self.socket.read()
            } catch let error as CancellationError {
                throw error
            } catch {
                throw TransportError(
                    .connectFailed,
                    "no CONNACK from \(self.broker)",
                    underlying: MQTTHandshakeFailure(cause: error)
                )
            }
            guard !chunk.isEmpty else {
                throw TransportError(
                    .connectFailed,
                    "\(self.broker) closed the connection with no CONNACK",
                    underlying: MQTTHandshakeFailure()
                )
            }
            decoder.append(chunk)
        }
    }
}
