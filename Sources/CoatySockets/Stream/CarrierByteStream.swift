/// A byte stream that another protocol can be carried over: TCP, or TLS over TCP, under WebSocket.
///
/// Beside ``ByteStreamConnection``, the carried protocol needs to hand over a short last message
/// (a WebSocket close frame, an HTTP error response) and half-close without waiting for a peer that
/// may never read.
package protocol CarrierByteStream: ByteStreamConnection {
    /// Sends what the stream takes at once, without waiting. The caller must not be writing
    /// concurrently.
    ///
    /// - Returns: How many of `bytes` were taken: all, some, or none.
    func writeWithoutWaiting(_ bytes: [UInt8]) -> Int

    /// Ends this side's output gracefully without waiting; reads still work.
    func shutdownOutputWithoutWaiting()
}

extension TCPConnection: CarrierByteStream {
    /// Half-closes the connection (``shutdownOutput()``).
    package func shutdownOutputWithoutWaiting() {
        self.shutdownOutput()
    }
}
