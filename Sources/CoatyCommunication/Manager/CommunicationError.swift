import CoatyCore

/// An error thrown by the communication layer.
///
/// Match on ``code`` to handle specific failures; ``message`` is for humans and may change.
///
/// ```swift
/// do { _ = try AdvertiseEvent(object) } catch let error as CommunicationError where error.code == .invalidArgument { … }
/// ```
public struct CommunicationError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// The cause, if any.
    public var underlying: (any Error)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: A human-readable explanation.
    ///   - underlying: The cause, if any.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String {
        describeError(code: self.code, message: self.message, underlying: self.underlying)
    }

    /// The kind of a ``CommunicationError``. New codes may be added in minor releases.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidArgument = "invalid argument"
            case invalidTopic = "invalid topic"
            case invalidEvent = "invalid event"
            case invalidResponse = "invalid response"
            case timedOut = "timed out"
            case notRunning = "not running"
            case alreadyRunning = "already running"
            case outboxFull = "outbox full"
            case invalidConfiguration = "invalid configuration"
        }

        private let base: Base

        /// An argument of an outbound call is invalid, for example an object type containing `/`.
        public static let invalidArgument = Code(base: .invalidArgument)
        /// A topic or topic filter is invalid, for example a Raw topic that starts with `coaty/`.
        public static let invalidTopic = Code(base: .invalidTopic)
        /// An event's data violates the Coaty protocol (outbound: at construction; inbound: on decode).
        public static let invalidEvent = Code(base: .invalidEvent)
        /// A response does not fit its request, for example a Resolve whose object id differs from
        /// the Discover's object id.
        public static let invalidResponse = Code(base: .invalidResponse)
        /// No response arrived within the requested time.
        public static let timedOut = Code(base: .timedOut)
        /// The operation needs a running communication manager.
        public static let notRunning = Code(base: .notRunning)
        /// ``CommunicationManager/run()`` was called while it is already running.
        public static let alreadyRunning = Code(base: .alreadyRunning)
        /// A publication that cannot wait was refused: the outbox is full while online (see
        /// ``CommunicationManager/publishWithoutWaiting(_:)-(AdvertiseEvent)``).
        public static let outboxFull = Code(base: .outboxFull)
        /// The configuration can never work, for example a broker URL with an unsupported scheme:
        /// ``CommunicationManager/run()`` throws it at once instead of retrying.
        public static let invalidConfiguration = Code(base: .invalidConfiguration)

        public var description: String { self.base.rawValue }
    }
}
