/// The cause (`TransportError.underlying`) of a failed connect in which the broker accepted the
/// connection (TCP, and TLS or WebSocket where used) but the MQTT handshake did not complete: no CONNACK
/// within the connect timeout, the connection closed or failed before CONNACK, or CONNECT could not be
/// sent.
///
/// It tells "the broker cannot be reached" (a `TransportError` without it) from "it was reached but did
/// not answer as an MQTT broker", which the `coaty` tool reports differently.
package struct MQTTHandshakeFailure: Error, Sendable, CustomStringConvertible {
    /// What made the handshake fail, if anything more than the message of its `TransportError` says.
    package var cause: (any Error)?

    package init(cause: (any Error)? = nil) {
        self.cause = cause
    }

    /// The cause's description; without one, "no CONNACK", which each message without a cause says
    /// already (so it is not printed twice).
    package var description: String {
        self.cause.map { String(describing: $0) } ?? "no CONNACK"
    }
}
