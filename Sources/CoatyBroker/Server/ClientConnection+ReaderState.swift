import CoatyMQTTPackets
import CoatySockets

extension ClientConnection {
    /// The per-connection values the reader keeps between packets.
    ///
    /// Used by one thread at a time: the reader's task, or, while that task waits for a plain TCP
    /// read, the reactor's thread handling the read in its place (see ``inlineHandler(_:outbox:watch:)``); the socket
    /// handle's lock orders the hand-overs. An object, not a value, so that it does not sit in the
    /// reader's async frames (about 300 bytes of them); see the comment above ``opened()``.
    final class ReaderState: @unchecked Sendable {
        var decoder: MQTTPacketDecoder
        var session: SessionID?
        // The flags right after `session`'s tag byte fill its padding (fields are laid out in order).
        var sawFirstByte = false
        /// Whether the reader yields its thread before its next read.
        var yieldIsDue = false
        var clientID: String?
        /// The client's access control rules once connected; `nil` without an ACL.
        var access: ClientAccess?
        /// The bytes of an unfinished packet counted in ``MQTTBroker/unfinishedPacketBytes``.
        var heldBytes = 0
        /// Sessions and connections whose queues this client's publishes found filling up.
        var congestedSessions: Set<SessionID> = []
        var congestedConnections: Set<ConnectionID> = []
        /// Consumers found stuck, with their progress counter then: not waited for until it moves.
        var stuckConsumers: [String: UInt64] = [:]
        /// Reads since the reader last yielded its thread.
        var readsSinceYield = 0
        /// The outboxes claimed while handling the current read's packets, written at its end. Never
        /// `nil` for a reader; optional because `nil` is how other callers of
        /// ``MQTTBroker/Core/dispatch(_:directWrites:)`` say that they wake writers instead.
        var directWrites: DirectWrites? = DirectWrites()
        /// Where the reactor's thread stopped handling this client's reads, for the task to go on.
        var inlineStep: ReaderStep?
        /// The socket when the connection may park between reads: plain TCP (see ``ParkedConnections``).
        let parkingSocket: TCPConnection?
        /// Ends the wait of the socket's reader, for the outbox (``Outbox/park(wakingReader:)``): made
        /// once, not at every park.
        let wakeReader: (@Sendable () -> Void)?

        /// The connection, its outbox and its watch, for the reactor's thread to handle the reads of a
        /// parked connection and to hand it back to a task (see ``ParkedConnections``).
        let connection: ClientConnection
        let outbox: Outbox
        let watch: ActivityWatch

        init(
            connection: ClientConnection,
            outbox: Outbox,
            watch: ActivityWatch,
            decoder: MQTTPacketDecoder,
            parkingSocket: TCPConnection?
        ) {
            self.connection = connection
            self.outbox = outbox
            self.watch = watch
            self.decoder = decoder
            self.parkingSocket = parkingSocket
            if let parkingSocket {
                self.wakeReader = { parkingSocket.wakeReader() }
            } else {
                self.wakeReader = nil
            }
        }
    }
}
