import CoatyCore
import CoatySockets
import CoatyTLS
import CoatyWebSocket
import Synchronization

extension MQTTBroker {
    /// The TLS listeners, bound: `mqtts://`, and `wss://` if configured.
    struct TLSListeners: Sendable {
        var listener: TCPListener
        var webSocketListener: TCPListener?
        var context: TLSContext

        func close() {
            self.listener.close()
            self.webSocketListener?.close()
        }
    }

    /// Loads the certificates of a TLS listener and binds its sockets.
    ///
    /// - Throws: ``BrokerError`` `.invalidConfiguration` for a port out of range, a
    ///   ``TLSListener/requiresClientCertificate`` without a CA file, a certificate, key or CA file
    ///   that cannot be used, or no OpenSSL 3; `.bindFailed` if a port cannot be bound.
    static func bindTLS(_ tls: TLSListener, host: String) throws -> TLSListeners {
        for port in [tls.port, tls.webSocketPort].compactMap({ $0 }) where !(0...65_535).contains(port) {
            throw BrokerError(.invalidConfiguration, "TLS port \(port) is out of range")
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
        let listener: TCPListener
        do {
            listener = try TCPListener.bind(host: host, port: tls.port)
        } catch {
            throw BrokerError(
                .bindFailed,
                "cannot listen for TLS connections on \(host):\(tls.port)",
                underlying: error
            )
        }
        guard let webSocketPort = tls.webSocketPort else {
            return TLSListeners(listener: listener, context: context)
        }
        do {
            let webSocketListener = try TCPListener.bind(host: host, port: webSocketPort)
            return TLSListeners(listener: listener, webSocketListener: webSocketListener, context: context)
        } catch {
            listener.close()
            throw BrokerError(
                .bindFailed,
                "cannot listen for WebSocket connections over TLS on \(host):\(webSocketPort)",
                underlying: error
            )
        }
    }

    /// Performs the TLS handshake (and for `wss://` the WebSocket opening handshake) within the
    /// connect timeout, then serves the MQTT session over the connection. A client that is not
    /// speaking TLS, offers no common version, or lacks a required certificate is logged at `.notice`
    /// and its connection closed; nothing else is affected.
    func serveTLS(_ tcp: TCPConnection, id: ConnectionID, context: TLSContext, overWebSocket: Bool) async {
        let failure = overWebSocket ? "TLS or WebSocket handshake failed" : "TLS handshake failed"
        await self.serve(tcp, id: id, failure: failure) {
            let tls = try await TLSConnection.accept(tcp, context: context)
            guard overWebSocket else { return tls }
            return try await WebSocketConnection.accept(tls, configuration: self.webSocketConfiguration)
        }
    }
}
