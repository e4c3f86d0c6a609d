import CoatyCore
import CoatySockets
import CoatyTLS
import Synchronization

extension MQTTBroker {
    /// Loads the certificates of a TLS listener and binds its socket.
    ///
    /// - Throws: ``BrokerError`` `.invalidConfiguration` for a port out of range, a
    ///   ``TLSListener/requiresClientCertificate`` without a CA file, a certificate, key or CA file
    ///   that cannot be used, or no OpenSSL 3; `.bindFailed` if the port cannot be bound.
    static func bindTLS(_ tls: TLSListener, host: String) throws -> (TCPListener, TLSContext) {
        guard (0...65_535).contains(tls.port) else {
            throw BrokerError(.invalidConfiguration, "TLS port \(tls.port) is out of range")
        }
        if tls.requiresClientCertificate && tls.caFile == nil {
            throw BrokerError(.invalidConfiguration, "requiring client certificates needs a CA file to check them")
        }
        let context: TLSContext
        do {
            context = try TLSContext(
                TLSConfiguration(
                    role: .server,
                    peerVerification: tls.caFile == nil ? .none : tls.requiresClientCertificate ? .required : .optional,
                    trustedCertificates: tls.caFile.map { .file($0) },
                    certificateChain: .file(tls.certificateFile),
                    privateKey: .file(tls.keyFile)
                )
            )
        } catch {
            throw BrokerError(.invalidConfiguration, "cannot set up TLS: \(error.message)", underlying: error)
        }
        do {
            return (try TCPListener.bind(host: host, port: tls.port), context)
        } catch {
            throw BrokerError(
                .bindFailed,
                "cannot listen for TLS connections on \(host):\(tls.port)",
                underlying: error
            )
        }
    }

    /// Performs the TLS handshake within the connect timeout, then serves the MQTT session over the
    /// TLS connection.
    ///
    /// A client that is not speaking TLS, offers no common version, or lacks a required certificate
    /// is logged at `.notice` and its connection closed; nothing else is affected.
    func serveTLS(_ tcp: TCPConnection, id: ConnectionID, context: TLSContext) async {
        // The sweeper closes the socket of a client that does not complete the handshake in time;
        // the CONNECT timeout then starts afresh in `ClientConnection`.
        let watch = ActivityWatch(socket: tcp, limit: self.configuration.connectTimeout)
        self.watches.withLock { $0[id] = watch }
        let socket: TLSConnection
        do {
            socket = try await TLSConnection.accept(tcp, context: context)
        } catch {
            _ = self.watches.withLock { $0.removeValue(forKey: id) }
            tcp.close()
            let reason = watch.hasFired ? "timed out" : "\(error)"
            self.logger.notice(
                "TLS handshake failed",
                metadata: ["remote": "\(tcp.remoteDescription)", "reason": "\(reason)"]
            )
            return
        }
        _ = self.watches.withLock { $0.removeValue(forKey: id) }
        await ClientConnection(broker: self, socket: socket, id: id).serve()
    }
}
