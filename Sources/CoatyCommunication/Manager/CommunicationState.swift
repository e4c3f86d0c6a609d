/// Whether a ``CommunicationManager`` is connected through its transport.
public enum CommunicationState: Sendable, Hashable, CustomStringConvertible {
    /// Not connected: publications are queued, subscriptions are applied on the next connect.
    case offline
    /// Connected, subscribed and joined (the identity has been advertised).
    case online

    public var description: String {
        switch self {
        case .offline: "offline"
        case .online: "online"
        }
    }
}
