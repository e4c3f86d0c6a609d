import CoatyCore

/// An error raised by a ``Transport`` or one of its connections.
///
/// Match on ``code``; ``message`` is for humans and may change.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// The cause, if any.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String {
        describeError(code: self.code, message: self.message, underlying: self.underlying)
    }

    /// The kind of a ``TransportError``. New codes may be added in minor releases.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case connectFailed = "connect failed"
            case connectionRefused = "connection refused"
            case connectionLost = "connection lost"
            case connectionClosed = "connection closed"
            case protocolViolation = "protocol violation"
            case subscriptionRefused = "subscription refused"
            case invalidArgument = "invalid argument"
            case timedOut = "timed out"
            case invalidConfiguration = "invalid configuration"
        }

        private let base: Base

        /// The peer could not be reached.
        public static let connectFailed = Code(base: .connectFailed)
        /// The peer refused the connection (for example MQTT CONNACK with a non-zero return code).
        public static let connectionRefused = Code(base: .connectionRefused)
        /// The connection broke: I/O error, peer closed, keep-alive expired, malformed input.
        public static let connectionLost = Code(base: .connectionLost)
        /// The connection was already closed by this side.
        public static let connectionClosed = Code(base: .connectionClosed)
        /// The peer violated the protocol.
        public static let protocolViolation = Code(base: .protocolViolation)
        /// The peer refused a subscription.
        public static let subscriptionRefused = Code(base: .subscriptionRefused)
        /// An argument was invalid, for example a malformed topic.
        public static let invalidArgument = Code(base: .invalidArgument)
        /// An operation did not complete in time.
        public static let timedOut = Code(base: .timedOut)
        /// The transport's configuration can never work (for example a broker URL with an unsupported
        /// scheme or a port out of range): retrying is pointless, so a communication manager's `run()`
        /// fails with it at once.
        public static let invalidConfiguration = Code(base: .invalidConfiguration)

        public var description: String { self.base.rawValue }
    }
}
