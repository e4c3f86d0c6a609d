/// A byte stream whose small messages need not be handed between threads: the reactor's thread can
/// handle its reads while the reading task waits, and any thread can write to it without waiting.
///
/// ``TCPConnection`` is one, and TLS over TCP (`CoatyTLS`'s `TLSConnection`) another: each read and
/// write is a non-blocking call on the socket, plus, for TLS, decryption or encryption in memory. A
/// broker uses it to read, route and write a small message in one turn of the reactor's thread, as
/// mosquitto's single thread does, instead of waking a task for each step.
package protocol DirectByteStream: ByteStreamConnection {
    /// Reads like ``ByteStreamConnection/read(maxBytes:)``, but while it waits the reactor's thread
    /// reads from the socket and passes what it gets to `consume` whenever one socket read brings at
    /// most `limit` bytes, and goes on waiting while `consume` returns `true`.
    ///
    /// `consume` runs on the reactor's thread, never at the same time as the caller, and must be short
    /// and never block: every socket of the process waits while it runs. The bytes it gets are valid
    /// only while it runs. A larger read, the end of the stream or an error goes back to the caller.
    ///
    /// - Throws: Like ``ByteStreamConnection/read(maxBytes:)``.
    func read(
        maxBytes: Int,
        handlingUpTo limit: Int,
        _ consume: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool
    ) async throws -> DirectReadOutcome

    /// Sends what the socket takes of `bytes` at once, without waiting, from any thread, and returns
    /// what it did not take, in the form ``writeLeftover(_:)`` sends: empty when all went.
    ///
    /// The caller must not be writing concurrently, and must pass a non-empty result to
    /// ``writeLeftover(_:)`` before anything else is written.
    func sendWithoutWaiting(_ bytes: [UInt8]) -> [UInt8]

    /// Writes what ``sendWithoutWaiting(_:)`` left; suspends while the peer does not keep up.
    func writeLeftover(_ leftover: [UInt8]) async throws
}

/// What ``DirectByteStream/read(maxBytes:handlingUpTo:_:)`` returns.
package enum DirectReadOutcome: Sendable {
    /// Bytes for the caller to handle: a read made by the calling task, or one larger than the
    /// reactor's thread handles; empty at the end of the stream.
    case bytes([UInt8])
    /// The reactor's thread handed reads to `consume`, and the last call returned `false` (or it
    /// stopped to let other sockets go first), or the wait ended with no read for the caller: the
    /// caller goes on from the state `consume` left.
    case handled
}
