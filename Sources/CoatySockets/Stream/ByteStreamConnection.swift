/// A connected, reliable, ordered byte stream: what the MQTT client and broker read packets from and
/// write packets to.
///
/// ``TCPConnection`` is one; `CoatyWebSocket`'s `WebSocketConnection` is another, carrying the bytes
/// in WebSocket binary frames. Code that only moves MQTT bytes holds an `any ByteStreamConnection`
/// and does not care which it has: one existential call per read or write, no per-byte cost.
///
/// The rules of ``TCPConnection`` apply to every conformer: one task may read while another writes;
/// two concurrent reads (or two concurrent writes) are a programming error.
package protocol ByteStreamConnection: AnyObject, Sendable {
    /// The peer's address, for logs, for example `"127.0.0.1:50312"`.
    var remoteDescription: String { get }

    /// Reads the next available bytes.
    ///
    /// Suspends until data arrives, the peer closes, or the task is cancelled.
    ///
    /// - Parameter maxBytes: The most bytes to return.
    /// - Returns: Between 1 and `maxBytes` bytes, or an empty array at the end of the stream.
    /// - Throws: ``SocketError``, a conformer's protocol error, or `CancellationError`.
    func read(maxBytes: Int) async throws -> [UInt8]

    /// Writes all of `bytes`; suspends while the peer does not keep up.
    func write(_ bytes: [UInt8]) async throws

    /// Writes several buffers in order, as if concatenated, in as few system calls as it can.
    func write(contentsOf chunks: [[UInt8]]) async throws

    /// Marks that this side sends something it waits for an answer to (see
    /// ``TCPConnection/noteExchange()``).
    func noteExchange()

    /// Ends this side's output gracefully (TCP: FIN); reads still work. Never waits for the peer.
    func shutdownOutput() async

    /// Closes the connection at once. Idempotent; pending reads and writes throw.
    func close()

    /// Whether ``close()`` has been called.
    var isClosed: Bool { get }
}

extension ByteStreamConnection {
    /// Reads the next available bytes, at most 64 KiB (see ``read(maxBytes:)``).
    package func read() async throws -> [UInt8] {
        try await self.read(maxBytes: 65_536)
    }
}
