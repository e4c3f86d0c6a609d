extension MQTTBroker {
    /// A listener for MQTT over TLS (`mqtts://`), beside the plain TCP one (see
    /// ``Configuration/tls``).
    ///
    /// The certificate and key are PEM files, read when the broker binds, so a missing or mismatched
    /// file fails ``MQTTBroker/bind(host:port:configuration:)``, not the first client. With
    /// ``caFile``, clients that present a certificate must present one signed by a CA in it; with
    /// ``requiresClientCertificate`` too, clients without one are refused in the handshake (mutual
    /// TLS). TLS 1.2 and 1.3 are accepted. TLS needs OpenSSL 3 (`libssl.so.3`) at run time.
    public struct TLSListener: Sendable, Hashable {
        /// The port, or 0 for a free one (read it from ``MQTTBroker/tlsPort``).
        public var port: Int
        /// The PEM file of the server certificate, followed by any intermediate CA certificates.
        public var certificateFile: String
        /// The PEM file of the certificate's private key, unencrypted.
        public var keyFile: String
        /// The PEM file of the CAs whose client certificates are accepted, or `nil` (the default) to
        /// ask clients for no certificate.
        public var caFile: String?
        /// Whether a client without a certificate signed by ``caFile`` is refused. Requires
        /// ``caFile``. Defaults to `false`.
        public var requiresClientCertificate: Bool
        /// The port of a listener for MQTT over WebSocket over TLS (`wss://`) with the same
        /// certificates and client checks, 0 for a free one (read it from
        /// ``MQTTBroker/secureWebSocketPort``); `nil` (the default) for none. Its WebSocket side is
        /// that of ``Configuration/webSocketPort``.
        public var webSocketPort: Int?

        /// Creates a TLS listener configuration.
        ///
        /// - Parameters:
        ///   - port: The port, 0 for any free one. Defaults to 8883, MQTT over TLS's registered port.
        ///   - certificateFile: The server certificate (PEM).
        ///   - keyFile: Its private key (PEM).
        ///   - caFile: The CAs of accepted client certificates; defaults to none.
        ///   - requiresClientCertificate: Whether clients must present a certificate; defaults to
        ///     `false`.
        ///   - webSocketPort: The `wss://` listener's port, 0 for any; `nil` (the default) for none.
        public init(
            port: Int = 8883,
            certificateFile: String,
            keyFile: String,
            caFile: String? = nil,
            requiresClientCertificate: Bool = false,
            webSocketPort: Int? = nil
        ) {
            self.webSocketPort = webSocketPort
            self.port = port
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.caFile = caFile
            self.requiresClientCertificate = requiresClientCertificate
        }
    }
}
