import CoatyTLS

extension MQTTTransport {
    /// How an ``MQTTTransport`` secures `mqtts://` and `wss://` connections: which certificate authorities it
    /// trusts, the client certificate it presents, SNI and ALPN.
    ///
    /// The defaults verify the broker: its certificate must chain to the system's trust store (Debian:
    /// /etc/ssl/certs) and name the host of the broker URL. Verification is turned off only by
    /// setting ``certificateVerification`` to ``CertificateVerification/disabled``.
    ///
    /// TLS uses OpenSSL 3, loaded when the first TLS connection is made; without it
    /// (`libssl.so.3`, Debian's `libssl3`) connecting fails with `TransportError` `.connectFailed`.
    public struct TLSOptions: Sendable, Hashable {
        /// The CA certificates that are trusted, or `nil` (the default) for the system's trust store.
        public var trustedCertificates: PEM?
        /// Whether the broker's certificate and host name are verified. Defaults to
        /// ``CertificateVerification/full``.
        public var certificateVerification: CertificateVerification
        /// The client certificate (followed by any intermediate CA certificates) presented to a broker
        /// that asks for one, for mutual TLS; requires ``clientKey``.
        public var clientCertificate: PEM?
        /// The private key of ``clientCertificate``, unencrypted.
        public var clientKey: PEM?
        /// The name sent as SNI and required in the broker's certificate, when it differs from the
        /// broker URL's host (for example when connecting to an IP address of a named broker).
        public var serverName: String?
        /// Protocol names offered with ALPN, most preferred first; none by default. AWS IoT Core
        /// serves MQTT on port 443 under `x-amzn-mqtt-ca`.
        public var alpnProtocols: [String]
        /// Whether TLS 1.2 is accepted beside TLS 1.3. Defaults to `true`.
        public var allowsTLS12: Bool

        /// Creates TLS options.
        ///
        /// - Parameters:
        ///   - trustedCertificates: The trusted CAs; `nil` (the default) for the system's.
        ///   - certificateVerification: Defaults to ``CertificateVerification/full``.
        ///   - clientCertificate: A client certificate; defaults to none.
        ///   - clientKey: Its private key; defaults to none.
        ///   - serverName: The name to verify and send as SNI; defaults to the broker URL's host.
        ///   - alpnProtocols: ALPN names; defaults to none.
        ///   - allowsTLS12: Whether TLS 1.2 is accepted; defaults to `true`.
        public init(
            trustedCertificates: PEM? = nil,
            certificateVerification: CertificateVerification = .full,
            clientCertificate: PEM? = nil,
            clientKey: PEM? = nil,
            serverName: String? = nil,
            alpnProtocols: [String] = [],
            allowsTLS12: Bool = true
        ) {
            self.trustedCertificates = trustedCertificates
            self.certificateVerification = certificateVerification
            self.clientCertificate = clientCertificate
            self.clientKey = clientKey
            self.serverName = serverName
            self.alpnProtocols = alpnProtocols
            self.allowsTLS12 = allowsTLS12
        }

        /// Certificates or a key in PEM form: a file, or the text itself.
        public struct PEM: Sendable, Hashable {
            let source: TLSConfiguration.PEM

            /// The PEM file at `path`, read when a connection is made.
            public static func file(_ path: String) -> PEM { PEM(source: .file(path)) }

            /// PEM text (`-----BEGIN CERTIFICATE-----` …) held in memory.
            public static func text(_ pem: String) -> PEM { PEM(source: .text(pem)) }
        }

        /// Whether the broker's certificate is verified.
        public struct CertificateVerification: Sendable, Hashable, CustomStringConvertible {
            private enum Base: String, Sendable, Hashable {
                case full
                case disabled
            }

            private let base: Base

            /// The certificate must chain to a trusted CA, be valid now and name the broker's host.
            public static let full = CertificateVerification(base: .full)
            /// No verification: the connection is encrypted, but anyone between the agent and the
            /// broker can read and change it. For tests against a broker with a throw-away
            /// certificate only.
            public static let disabled = CertificateVerification(base: .disabled)

            public var description: String { self.base.rawValue }
        }

        /// The OpenSSL context settings for these options.
        var contextConfiguration: TLSConfiguration {
            TLSConfiguration(
                role: .client,
                peerVerification: self.certificateVerification == .full ? .required : .none,
                trustedCertificates: self.trustedCertificates?.source,
                certificateChain: self.clientCertificate?.source,
                privateKey: self.clientKey?.source,
                alpnProtocols: self.alpnProtocols,
                allowsTLS12: self.allowsTLS12
            )
        }
    }
}
