/// An UNSUBSCRIBE packet: a client's request to remove subscriptions (§3.10).
package struct MQTTUnsubscribePacket: Sendable, Hashable {
    /// The non-zero packet identifier, echoed in the UNSUBACK.
    package var packetID: UInt16
    /// The topic filters to remove, at least one, compared byte for byte by the server.
    package var filters: [String]

    /// Creates an UNSUBSCRIBE packet.
    package init(packetID: UInt16, filters: [String]) {
        self.packetID = packetID
        self.filters = filters
    }
}
