/// A report of something the communication manager dropped instead of delivering or sending, or of an
/// inbound value it delivered although it cannot be used as it stands.
///
/// Bad inbound data never crashes an agent and is never lost silently: an undecodable or invalid
/// event, an inbound message on a Coaty topic that cannot be parsed, a response that fails the
/// requester-side checks, or a publication dropped from a full offline queue or left unsent when
/// `run()` ends is reported through ``CommunicationManager/observeDiagnostics()`` and the logger. A consumer that
/// falls behind is told how many it skipped (``skipped``).
public struct CommunicationDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// What kind of drop this is.
    public enum Kind: Sendable, Hashable {
        /// An inbound message could not be parsed or decoded, or its data is invalid.
        case invalidInboundEvent
        /// An inbound response failed the requester-side checks of its request.
        case rejectedResponse
        /// A queued publication was dropped because the offline queue was full, or because
        /// ``CommunicationManager/run()`` ended (stopped while offline, or cancelled) before it was sent.
        case droppedPublication
        /// An observer's buffer was full and its oldest event was dropped.
        case droppedEvent
        /// An inbound event was delivered, but holds a value that cannot be used as it stands and that
        /// coaty-js accepts: an empty source-id or correlation-id topic level, an empty id in a
        /// Discover, a Return error whose code is not an integer or whose message is not a string. The
        /// app decides what to do with the event.
        case unusableValue
        /// The consumer of ``CommunicationManager/observeDiagnostics()`` fell behind and ``skipped``
        /// diagnostics were not put in its stream (they were logged); sent as the stream's last
        /// element when no later diagnostic carried the count.
        case skippedDiagnostics
        /// A connection attempt failed or the connection was lost; the reason names the error and
        /// when the manager tries again (the topic is empty). Also in
        /// ``CommunicationManager/connectionFailure``.
        case connectionFailed
    }

    /// What kind of drop this is.
    public var kind: Kind
    /// The topic of the message concerned.
    public var topic: String
    /// Why it was dropped.
    public var reason: String
    /// How many diagnostics the observing stream skipped right before this one, because its consumer
    /// fell behind and its buffer was full (each was logged). Zero when none were skipped.
    public var skipped: Int = 0

    /// Creates a diagnostic.
    public init(kind: Kind, topic: String, reason: String) {
        self.kind = kind
        self.topic = topic
        self.reason = reason
    }

    public var description: String {
        let skipped = self.skipped > 0 && self.kind != .skippedDiagnostics ? " (\(self.skipped) skipped before)" : ""
        return "\(self.kind) on '\(self.topic)': \(self.reason)\(skipped)"
    }
}
