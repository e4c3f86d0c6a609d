/// Why a TLS connection failed: OpenSSL is missing, a certificate or key cannot be loaded, the
/// handshake failed (an untrusted, expired or wrong-host certificate, a missing client certificate),
/// or the peer broke the TLS protocol.
///
/// An MQTT connection over `mqtts://` reports it as the underlying error of the transport's
/// `TransportError`; ``message`` says what failed in words a user can act on.
public struct TLSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public var code: Code
    /// What went wrong, for example `"host name mismatch: the certificate is for other.example, not
    /// 127.0.0.1"`.
    public var message: String
    /// OpenSSL's own description of the error, when it has one (its error queue, or the
    /// certificate verification result).
    public var detail: String?

    /// Creates an error.
    package init(_ code: Code, _ message: String, detail: String? = nil) {
        self.code = code
        self.message = message
        self.detail = detail
    }

    public var description: String {
        guard let detail, !detail.isEmpty else { return "\(self.code): \(self.message)" }
        return "\(self.code): \(self.message) (\(detail))"
    }

    /// The kinds of ``TLSError``.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case libraryUnavailable = "TLS unavailable"
            case invalidConfiguration = "invalid TLS configuration"
            case certificateRejected = "certificate rejected"
            case handshakeFailed = "TLS handshake failed"
            case protocolViolation = "TLS protocol violation"
        }

        private let base: Base

        /// OpenSSL 3 (libssl.so.3) cannot be loaded.
        public static let libraryUnavailable = Code(base: .libraryUnavailable)
        /// A certificate, key or CA file cannot be read or does not fit (for example a key that does
        /// not match its certificate).
        public static let invalidConfiguration = Code(base: .invalidConfiguration)
        /// The peer's certificate failed verification: not trusted, expired, or for another host; or
        /// the peer refused ours, or required one we did not send.
        public static let certificateRejected = Code(base: .certificateRejected)
        /// The handshake failed for another reason: no common protocol version or cipher, or the peer
        /// closed the connection.
        public static let handshakeFailed = Code(base: .handshakeFailed)
        /// The peer sent something that is not TLS, or a record OpenSSL refused after the handshake.
        public static let protocolViolation = Code(base: .protocolViolation)

        public var description: String { self.base.rawValue }
    }
}
