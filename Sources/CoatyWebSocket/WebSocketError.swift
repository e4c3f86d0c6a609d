/// Why a WebSocket connection failed: a refused or malformed opening handshake, or a frame that
/// breaks RFC 6455 or the configured limits.
///
/// An MQTT connection over `ws://` reports it as the underlying error of the transport's
/// `TransportError`. When the peer broke the protocol, ``closeCode`` is the status code that was sent
/// to it in a close frame (1002 protocol error, 1003 unsupported data, 1007 invalid data, 1009 message
/// too big); when the peer closed the connection, it is the code the peer sent.
public struct WebSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public var code: Code
    /// The close status code sent to (or received from) the peer, if any.
    public var closeCode: UInt16?
    /// What went wrong, for logs.
    public var message: String

    /// Creates an error.
    package init(_ code: Code, closeCode: UInt16? = nil, _ message: String) {
        self.code = code
        self.closeCode = closeCode
        self.message = message
    }

    public var description: String {
        if let closeCode { return "\(self.code): \(self.message) (close code \(closeCode))" }
        return "\(self.code): \(self.message)"
    }

    /// The kinds of ``WebSocketError``.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case handshakeFailed = "handshake failed"
            case protocolViolation = "protocol violation"
            case messageTooBig = "message too big"
            case unsupportedData = "unsupported data"
            case closed = "closed"
        }

        private let base: Base

        /// The opening handshake was malformed, too large or refused.
        public static let handshakeFailed = Code(base: .handshakeFailed)
        /// A frame broke RFC 6455: bad header bits, wrong masking, a bad control frame, a bad
        /// fragment sequence or close payload (close code 1002 or 1007).
        public static let protocolViolation = Code(base: .protocolViolation)
        /// A frame or a fragmented message was larger than allowed (close code 1009).
        public static let messageTooBig = Code(base: .messageTooBig)
        /// A text frame where MQTT allows only binary frames [MQTT-6.0.0-1] (close code 1003).
        public static let unsupportedData = Code(base: .unsupportedData)
        /// The connection was closed by a close frame, or this side closed it.
        public static let closed = Code(base: .closed)

        public var description: String { self.base.rawValue }
    }
}
