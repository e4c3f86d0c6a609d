/// What a ``TLSContext`` is made from: the trusted roots, whether the peer is verified, this side's
/// certificate and key, the ALPN names and the oldest TLS version allowed.
package struct TLSConfiguration: Sendable, Hashable {
    /// Which end of the connection this is.
    package enum Role: Sendable, Hashable {
        /// Connects, sends SNI, verifies the server's certificate and host name.
        case client
        /// Accepts, presents ``TLSConfiguration/certificateChain``, optionally verifies clients.
        case server
    }

    /// How the peer's certificate is checked.
    package enum PeerVerification: Sendable, Hashable {
        /// Not at all: the connection is encrypted but the peer is not authenticated.
        case none
        /// Client: the server's certificate must chain to a trusted root and name the host. Server:
        /// a client certificate is asked for and, when sent, must chain to a trusted root.
        case optional
        /// As ``optional``, and a server refuses a client that sends no certificate.
        case required
    }

    /// Bytes in PEM form, or the path of a file holding them.
    package enum PEM: Sendable, Hashable {
        case file(String)
        case text(String)
    }

    package var role: Role
    package var peerVerification: PeerVerification
    /// The CA certificates that are trusted; `nil` for the system's trust store (Debian:
    /// /etc/ssl/certs).
    package var trustedCertificates: PEM?
    /// This side's certificate, followed by any intermediate CA certificates.
    package var certificateChain: PEM?
    /// The private key of the first certificate of ``certificateChain``.
    package var privateKey: PEM?
    /// Protocol names offered in ALPN, most preferred first (client only).
    package var alpnProtocols: [String]
    /// Whether TLS 1.2 is allowed beside TLS 1.3.
    package var allowsTLS12: Bool

    package init(
        role: Role,
        peerVerification: PeerVerification,
        trustedCertificates: PEM? = nil,
        certificateChain: PEM? = nil,
        privateKey: PEM? = nil,
        alpnProtocols: [String] = [],
        allowsTLS12: Bool = true
    ) {
        self.role = role
        self.peerVerification = peerVerification
        self.trustedCertificates = trustedCertificates
        self.certificateChain = certificateChain
        self.privateKey = privateKey
        self.alpnProtocols = alpnProtocols
        self.allowsTLS12 = allowsTLS12
    }
}
