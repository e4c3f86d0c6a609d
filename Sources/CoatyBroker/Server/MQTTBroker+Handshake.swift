import CoatyCore
import CoatySockets
import Synchronization

extension MQTTBroker {
    /// Runs a connection's opening handshake (WebSocket, TLS) within the connect timeout, then serves
    /// the MQTT session over the stream it returns. A client that fails the handshake or does not
    /// complete it in time is logged at `.notice` with `failure` and its connection closed; nothing
    /// else is affected.
    func serve(
        _ tcp: TCPConnection,
        id: ConnectionID,
        failure: String,
        afterHandshake handshake: () async throws -> any ByteStreamConnection
    ) async {
        // The sweeper closes the socket of a client that does not complete the handshake in time;
        // the CONNECT timeout then starts afresh in `ClientConnection`.
        let watch = ActivityWatch(socket: tcp, limit: self.configuration.connectTimeout, clock: self.clock)
        self.watches.withLock { $0[id] = watch }
        let socket: any ByteStreamConnection
        do {
            socket = try await handshake()
        } catch {
            _ = self.watches.withLock { $0.removeValue(forKey: id) }
            tcp.close()
            let reason = watch.hasFired ? "timed out" : "\(error)"
            self.logger.notice(failure, metadata: ["remote": "\(tcp.remoteDescription)", "reason": "\(reason)"])
            return
        }
        _ = self.watches.withLock { $0.removeValue(forKey: id) }
        // Only plain TCP connections park (see `ParkedConnections`): this one ends closed.
        _ = await ClientConnection(broker: self, socket: socket, id: id).serve()
    }
}
