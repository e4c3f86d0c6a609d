public import CoatyTransport

/// The cause (`TransportError.underlying`) of the `.connectionLost` that a QoS 1
/// or 2 publication throws when its connection fails after it was sent, but it stays in the client's
/// persistent session (``MQTTTransport/Configuration/cleanSession`` `false`).
///
/// The publication is sent again on the next connection with the same client identifier, if the broker
/// kept the session. Do not publish it again, or subscribers get it twice.
///
/// ```swift
/// do {
///     try await connection.publish(message)
/// } catch let error as TransportError where error.underlying is MQTTPublicationKept {
///     // Sent again on the next connection: nothing to do.
/// }
/// ```
public struct MQTTPublicationKept: Error, Sendable, CustomStringConvertible {
    /// Why the connection failed.
    public let connectionFailure: TransportError

    public var description: String {
        "kept in the persistent session after: \(self.connectionFailure)"
    }
}
