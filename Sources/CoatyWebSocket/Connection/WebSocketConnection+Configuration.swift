extension WebSocketConnection {
    /// Limits of a ``WebSocketConnection``.
    package struct Configuration: Sendable, Hashable {
        /// The largest frame payload accepted from the peer; a larger frame closes the connection
        /// with 1009 before its payload is buffered.
        package var maximumFrameSize: Int
        /// The largest fragmented message accepted from the peer (the sum of its frames' payloads);
        /// a larger one closes the connection with 1009.
        package var maximumMessageSize: Int
        /// The largest opening handshake head accepted (request or response).
        package var maximumHandshakeSize: Int
        /// The largest payload of a frame this side sends; a longer write goes out as several binary
        /// frames (each a message of its own). MQTT packets may span frames [MQTT-6.0.0-2], so this
        /// keeps our frames within a peer's frame limit without limiting packets.
        package var maximumOutgoingFrameSize: Int

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - maximumFrameSize: Defaults to 1 MiB.
        ///   - maximumMessageSize: Defaults to `maximumFrameSize`.
        ///   - maximumHandshakeSize: Defaults to 8 KiB.
        ///   - maximumOutgoingFrameSize: Defaults to 64 KiB.
        package init(
            maximumFrameSize: Int = 1 << 20,
            maximumMessageSize: Int? = nil,
            maximumHandshakeSize: Int = WebSocketHandshake.defaultMaximumHeadSize,
            maximumOutgoingFrameSize: Int = 1 << 16
        ) {
            self.maximumFrameSize = maximumFrameSize
            self.maximumMessageSize = maximumMessageSize ?? maximumFrameSize
            self.maximumHandshakeSize = maximumHandshakeSize
            self.maximumOutgoingFrameSize = max(1, maximumOutgoingFrameSize)
        }
    }
}
