/// Which end of a WebSocket connection this side is; it decides the masking rules (RFC 6455 §5.1).
package enum WebSocketRole: Sendable, Hashable {
    /// Masks every frame it sends; closes the connection on a masked frame from the server.
    case client
    /// Never masks; closes the connection on an unmasked frame from a client.
    case server
}
