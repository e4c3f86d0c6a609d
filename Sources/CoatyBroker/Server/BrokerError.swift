import CoatyCore

/// An error thrown by an ``MQTTBroker``.
///
/// Match on ``code``; ``message`` is for humans and may change.
public struct BrokerError: Error, Sendable, CustomStringConvertible {
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

    /// The kind of a ``BrokerError``. New codes may be added in minor releases.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case bindFailed = "bind failed"
            case acceptFailed = "accept failed"
            case invalidConfiguration = "invalid configuration"
            case invalidPasswordFile = "invalid password file"
            case invalidAccessControlList = "invalid access control list"
            case persistenceFailed = "persistence failed"
        }

        private let base: Base

        /// The listening socket could not be created or bound (address in use, permission, bad host).
        public static let bindFailed = Code(base: .bindFailed)
        /// The listening socket failed permanently while accepting connections.
        public static let acceptFailed = Code(base: .acceptFailed)
        /// A configuration value is out of range.
        public static let invalidConfiguration = Code(base: .invalidConfiguration)
        /// A password file cannot be read, or has malformed lines (see `PasswordFile.skippedLines`).
        public static let invalidPasswordFile = Code(base: .invalidPasswordFile)
        /// An ACL file cannot be read or has invalid lines.
        public static let invalidAccessControlList = Code(base: .invalidAccessControlList)
        /// The data directory of ``MQTTBroker/Configuration/persistence`` cannot be created, read or
        /// written, or another broker uses it.
        public static let persistenceFailed = Code(base: .persistenceFailed)

        public var description: String { self.base.rawValue }
    }
}
