import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A connected TCP stream with asynchronous reads and writes.
///
/// The socket is non-blocking and driven by the shared reactor: each operation tries its
/// system call first and suspends only on `EAGAIN`. All waits are cancellable. One task may read and
/// another write at the same time; two concurrent reads (or writes) are a programming error and the
/// second throws `EBUSY`.
package final class TCPConnection: DirectByteStream {
    /// Internal rather than private for the parking extension (TCPConnection+Parking.swift).
    let handle: SocketHandle

    /// The peer's numeric address, for example `"127.0.0.1:50312"`.
    package let remoteDescription: String
    /// Whether a read during an exchange (``noteExchange()``) asks the kernel to acknowledge at once
    /// (see `Syscalls.requestQuickAcknowledgement`): set for connections we open, so a client never
    /// waits on a broker's Nagle delay; not for accepted ones, where it would cost a broker throughput.
    private let acknowledgesAtOnce: Bool
    /// When ``noteExchange()`` was last called, in `Syscalls.monotonicNanoseconds()`.
    private let lastExchange = Atomic<Int64>(.min)
    /// Counts `send` calls, each before it is made: a send counted after a read carries the ACK of
    /// what that read took (see ``readInline(capacity:limit:shortReadDrains:_:)``).
    private let sends = Atomic<UInt64>(0)

    /// How long after ``noteExchange()`` reads are still acknowledged at once: 200 ms, Linux's longest
    /// delayed ACK (`TCP_DELACK_MAX`).
    ///
    /// Delayed ACKs stall a peer that sends with Nagle's algorithm in an exchange: this side sends a
    /// request, the peer answers with a small packet (a SUBACK) and holds the next one (the response)
    /// until that is acknowledged, while the kernel delays the ACK to ride on data this side is not
    /// going to send. So every read in the window asks for an immediate ACK; asking only after reads
    /// that had to wait still let 0 to 3 % of Call → Return round trips over mosquitto stall for
    /// 40 ms. Outside an exchange nothing is asked, as other MQTT clients do: acknowledging each read
    /// at once would break up the peer's coalescing of a stream of small messages. With mosquitto, a
    /// subscriber then read about two messages per `recv` instead of hundreds and lost about a quarter
    /// of its throughput, and even one immediate ACK of the SUBACK just before such a stream did (see
    /// Docs/Benchmarks.md). The price: what the peer sends right after a SUBACK to a connection that
    /// has not published for 200 ms may wait for the delayed ACK, once.
    private static let quickAcknowledgementWindow: Int64 = 200_000_000

    init(handle: SocketHandle, remoteDescription: String, acknowledgesAtOnce: Bool) {
        self.handle = handle
        self.remoteDescription = remoteDescription
        self.acknowledgesAtOnce = acknowledgesAtOnce
    }

    /// Marks that this side is sending something it may wait for an answer to (an MQTT client calls
    /// it for each PUBLISH): on a connection we opened, what it reads in the next
    /// ``quickAcknowledgementWindow`` is acknowledged at once (see
    /// `Syscalls.requestQuickAcknowledgement`). Costs one clock read.
    package func noteExchange() {
        guard self.acknowledgesAtOnce else { return }
        self.lastExchange.store(Syscalls.monotonicNanoseconds(), ordering: .relaxed)
    }

    /// Whether a read should ask for an immediate ACK (see ``noteExchange()``).
    private var acknowledgesNow: Bool {
        let exchange = self.lastExchange.load(ordering: .relaxed)
        return exchange != .min && Syscalls.monotonicNanoseconds() - exchange < Self.quickAcknowledgementWindow
    }

    deinit {
        self.handle.close()
    }

    /// Wraps an accepted non-blocking descriptor.
    static func adopt(fd: Int32) throws(SocketError) -> TCPConnection {
        try Syscalls.setNoDelay(fd)
        let remote = SocketAddress.peer(of: fd)?.description ?? "?"
        let handle = try SharedReactor.instance.register(fd: fd)
        return TCPConnection(handle: handle, remoteDescription: remote, acknowledgesAtOnce: false)
    }

    /// Connects to a TCP server.
    ///
    /// Tries each resolved address in turn. Suspends until the connection is established.
    ///
    /// - Parameters:
    ///   - host: An IPv4 or IPv6 literal, or a name such as `localhost`.
    ///   - port: The server's port.
    /// - Returns: The connection, with `TCP_NODELAY` set, acknowledging at once during exchanges
    ///   (``noteExchange()``).
    /// - Throws: ``SocketError`` (for example `ECONNREFUSED`); `CancellationError` if cancelled.
    package static func connect(host: String, port: Int) async throws -> TCPConnection {
        let addresses = try SocketAddress.resolve(host: host, port: port, passive: false)
        var lastError = SocketError(errno: EADDRNOTAVAIL, call: "connect")
        for address in addresses {
            let fd = try Syscalls.makeStreamSocket(family: address.family)
            let handle: SocketHandle
            do {
                try Syscalls.setNoDelay(fd)
                handle = try SharedReactor.instance.register(fd: fd)
            } catch {
                Syscalls.closeUnregistered(fd)
                throw error
            }
            do {
                try await Self.finishConnect(handle, to: address)
                return TCPConnection(handle: handle, remoteDescription: address.description, acknowledgesAtOnce: true)
            } catch let error as SocketError where !error.isClosed {
                handle.close()
                lastError = error
            } catch {
                handle.close()
                throw error
            }
        }
        throw lastError
    }

    private static func finishConnect(_ handle: SocketHandle, to address: SocketAddress) async throws {
        let call = "connect(\(address.description))"
        let edges = try handle.beginCall(.write, call: call)
        let rc = address.withSockAddr { PlatformShims.connect(handle.fd, $0, $1) }
        let code = errno
        handle.endCall()
        if rc == 0 { return }
        guard code == EINPROGRESS || code == EINTR else { throw SocketError(errno: code, call: call) }
        try await handle.wait(.write, since: edges, call: call)
        var soError: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try handle.beginCall(.write, call: call)
        let status = getsockopt(handle.fd, SOL_SOCKET, SO_ERROR, &soError, &length)
        let statusErrno = errno
        handle.endCall()
        guard status == 0 else { throw SocketError(errno: statusErrno, call: "getsockopt(SO_ERROR)") }
        guard soError == 0 else { throw SocketError(errno: soError, call: call) }
    }

    /// Reads the next available bytes.
    ///
    /// Suspends until data arrives, the peer closes, or the task is cancelled.
    ///
    /// - Parameter maxBytes: The most bytes to return.
    /// - Returns: Between 1 and `maxBytes` bytes, or an empty array at end of stream (peer sent FIN).
    /// - Throws: ``SocketError`` (closed by ``close()``, `ECONNRESET`, …); `CancellationError`.
    package func read(maxBytes: Int = 65_536) async throws -> [UInt8] {
        let capacity = max(1, maxBytes)
        return try await self.handle.perform(.read, call: "read") { fd in self.receive(fd, capacity: capacity) }
    }

    /// Reads like ``read(maxBytes:)``, but while it waits for data the reactor's thread reads and
    /// passes each read of at most `limit` bytes to `consume` (see
    /// ``DirectByteStream/read(maxBytes:handlingUpTo:_:)``): a small message is then handled where
    /// its arrival is reported, with no hand-over to the calling task (see
    /// `SocketHandle.wait(_:since:call:reads:)`).
    package func read(
        maxBytes: Int,
        handlingUpTo limit: Int,
        _ consume: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool
    ) async throws -> DirectReadOutcome {
        try await self.read(maxBytes: maxBytes, handlingUpTo: limit, after: nil, consume)
    }

    /// Reads like ``read(maxBytes:handlingUpTo:_:)``; given the `edges` of a
    /// ``readWithoutWaiting(maxBytes:)`` that found nothing, waits at once instead of reading again.
    package func read(
        maxBytes: Int,
        handlingUpTo limit: Int,
        after emptyRead: UInt64?,
        _ consume: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool
    ) async throws -> DirectReadOutcome {
        let capacity = max(1, maxBytes)
        let edges: UInt64
        if let emptyRead {
            edges = emptyRead
        } else {
            switch try self.readWithoutWaiting(maxBytes: capacity) {
            case .bytes(let bytes): return .bytes(bytes)
            case .wouldBlock(let seen): edges = seen
            }
        }
        let reads = TCPInlineReads(connection: self, limit: limit, maxBytes: capacity, consumer: .task(consume))
        try await self.handle.wait(.read, since: edges, call: "read", reads: reads)
        // Woken without a read to hand over (``wakeReader()``, or a read edge the reactor's thread
        // did not handle): the caller looks again.
        return try reads.takeOutcome()?.get() ?? .handled
    }

    /// What ``readWithoutWaiting(maxBytes:)`` found.
    package enum ImmediateRead: Sendable {
        /// Between 1 and `maxBytes` bytes, or none at the end of the stream.
        case bytes([UInt8])
        /// Nothing to read now; the read edges seen, for ``park(since:handlingUpTo:reader:)``.
        case wouldBlock(edges: UInt64)
    }

    /// One read that does not wait.
    ///
    /// - Throws: ``SocketError`` (closed, `ECONNRESET`, …).
    package func readWithoutWaiting(maxBytes: Int) throws -> ImmediateRead {
        let (edges, result) = try self.receiveNow(capacity: max(1, maxBytes))
        switch result {
        case .done(let bytes): return .bytes(bytes)
        case .failed(let code): throw SocketError(errno: code, call: "read")
        case .wouldBlock: return .wouldBlock(edges: edges)
        }
    }

    /// Ends the wait of this connection's reader, waiting or parked, as if data had come (see
    /// ``read(maxBytes:handlingUpTo:_:)`` and ``park(since:handlingUpTo:reader:)``); with none
    /// waiting, its next wait returns at once.
    package func wakeReader() {
        self.handle.wakeReader()
    }

    /// How many reads the reactor's thread hands to one connection per readiness report before it
    /// lets the connection's task go on, so a client that keeps sending cannot hold the thread.
    private static let inlineReadsPerReport = 16

    /// The reactor thread's part of ``read(maxBytes:handlingUpTo:_:)`` and of a park: reads and
    /// passes each read of at most `limit` bytes to `consume`.
    ///
    /// It reads into a buffer on the reactor thread's stack, which `consume` must not keep: a small
    /// message then costs no allocation. A read for the reader is copied into an array. With
    /// `shortReadDrains` a read shorter than `capacity` ends the turn as `EAGAIN` would (see
    /// `SocketHandle.signal(readable:writable:mayHandleReads:shortReadDrains:)`).
    ///
    /// - Returns: `nil` to keep waiting (the socket is drained); otherwise what the reader goes on
    ///   with: a read it must handle itself (larger than `limit`, or the end of the stream), `.handled`
    ///   (`consume` returned `false`, or the reads per report are used up), or the error.
    func readInline(
        capacity: Int,
        limit: Int,
        shortReadDrains: Bool,
        _ consume: (UnsafeRawBufferPointer) -> Bool
    ) -> Result<DirectReadOutcome, SocketError>? {
        withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) { buffer in
            for _ in 0..<Self.inlineReadsPerReport {
                guard let result = try? self.receiveNow(into: buffer) else {
                    return .failure(SocketError.closed("read"))
                }
                switch result {
                case .wouldBlock:
                    return nil
                case .failed(let code):
                    return .failure(SocketError(errno: code, call: "read"))
                case .done(let count) where count == 0 || count > limit:
                    if count > 0 { self.acknowledgeDuringExchange() }
                    return .success(.bytes(Array(UnsafeRawBufferPointer(rebasing: buffer[..<count]))))
                case .done(let count):
                    let sendsBefore = self.sends.load(ordering: .acquiring)
                    let goesOn = consume(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                    // Only after handling the read, and only if nothing was sent meanwhile: an answer
                    // (a callee's Return) carries the ACK, and the socket stays in delayed-ACK mode
                    // for the next one; asking before the handling sent a bare ACK ahead of it.
                    if self.sends.load(ordering: .acquiring) == sendsBefore { self.acknowledgeDuringExchange() }
                    if !goesOn { return .success(.handled) }
                    if shortReadDrains && count < capacity { return nil }
                }
            }
            return .success(.handled)
        }
    }

    /// One `recv` into `buffer`, as a call on the handle, without waiting.
    ///
    /// - Throws: A closed ``SocketError`` once the connection is closed.
    private func receiveNow(
        into buffer: UnsafeMutableRawBufferPointer
    ) throws(SocketError) -> SocketHandle.CallResult<Int> {
        _ = try self.handle.beginCall(.read, call: "read")
        defer { self.handle.endCall() }
        return self.receive(self.handle.fd, into: buffer)
    }

    /// ``acknowledgeDuringExchange(_:)`` as a call on the handle, for the reactor thread's reads, which
    /// ask only once they are handled.
    private func acknowledgeDuringExchange() {
        guard self.acknowledgesNow, (try? self.handle.beginCall(.read, call: "read")) != nil else { return }
        defer { self.handle.endCall() }
        self.acknowledgeDuringExchange(self.handle.fd)
    }

    /// Asks for an immediate ACK of what was read, during an exchange only (see
    /// ``quickAcknowledgementWindow``).
    private func acknowledgeDuringExchange(_ fd: Int32) {
        if self.acknowledgesNow { Syscalls.requestQuickAcknowledgement(fd) }
    }

    /// One `recv` of at most `capacity` bytes, as a call on the handle, without waiting; with the read
    /// edges seen before it, to wait for the next.
    ///
    /// - Throws: A closed ``SocketError`` once the connection is closed.
    private func receiveNow(capacity: Int) throws(SocketError) -> (
        edges: UInt64, result: SocketHandle.CallResult<[UInt8]>
    ) {
        let edges = try self.handle.beginCall(.read, call: "read")
        defer { self.handle.endCall() }
        return (edges, self.receive(self.handle.fd, capacity: capacity))
    }

    /// One `recv` of at most `capacity` bytes.
    private func receive(_ fd: Int32, capacity: Int) -> SocketHandle.CallResult<[UInt8]> {
        var result: SocketHandle.CallResult<Int> = .wouldBlock
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            result = self.receive(fd, into: UnsafeMutableRawBufferPointer(buffer))
            if case .done(let n) = result { count = n } else { count = 0 }
            if count > 0 { self.acknowledgeDuringExchange(fd) }
        }
        switch result {
        case .done: return .done(bytes)
        case .wouldBlock: return .wouldBlock
        case .failed(let code): return .failed(code)
        }
    }

    /// One `recv` into `buffer`: the number of bytes read.
    private func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> SocketHandle.CallResult<Int> {
        Syscalls.receive(fd, into: buffer)
    }

    /// Writes all of `bytes`.
    ///
    /// Suspends while the socket's send buffer is full (a slow reader), and returns once every byte is
    /// handed to the kernel.
    ///
    /// - Throws: ``SocketError`` (closed, `EPIPE`, `ECONNRESET`, …); `CancellationError` if cancelled
    ///   while waiting, in which case an unknown prefix of `bytes` may have been sent.
    package func write(_ bytes: [UInt8]) async throws {
        var offset = 0
        while offset < bytes.count {
            let start = offset
            let written: Int = try await self.handle.perform(.write, call: "write") { fd in
                self.sends.add(1, ordering: .releasing)
                return bytes.withUnsafeBytes { raw in
                    Syscalls.send(fd, UnsafeRawBufferPointer(rebasing: raw[start...]))
                }
            }
            offset += written
        }
    }

    /// Writes several buffers in order, as if concatenated.
    ///
    /// Small chunks are gathered into one buffer so that a batch costs one system call; this is the
    /// call a writer uses to coalesce queued packets.
    ///
    /// - Throws: Like ``write(_:)``.
    package func write(contentsOf chunks: [[UInt8]]) async throws {
        switch chunks.count {
        case 0:
            return
        case 1:
            try await self.write(chunks[0])
        default:
            var total = 0
            for chunk in chunks { total += chunk.count }
            var gathered: [UInt8] = []
            gathered.reserveCapacity(total)
            for chunk in chunks { gathered.append(contentsOf: chunk) }
            try await self.write(gathered)
        }
    }

    /// Sends what the socket takes at once, without waiting: one `send`.
    ///
    /// For a short last word on a connection about to be closed (a WebSocket close frame), where
    /// waiting for a peer that does not read is not an option. The caller must not be writing
    /// concurrently.
    ///
    /// - Returns: How many bytes were handed to the kernel: all, some, or none (0 also when the
    ///   connection is closed or the call fails).
    package func writeWithoutWaiting(_ bytes: [UInt8]) -> Int {
        guard (try? self.handle.beginCall(.write, call: "write")) != nil else { return 0 }
        defer { self.handle.endCall() }
        let fd = self.handle.fd
        self.sends.add(1, ordering: .releasing)
        guard case .done(let written) = bytes.withUnsafeBytes({ Syscalls.send(fd, $0) }) else { return 0 }
        return written
    }

    /// Sends what the socket takes at once (see ``DirectByteStream/sendWithoutWaiting(_:)``): one
    /// `send`; returns the bytes it did not take.
    package func sendWithoutWaiting(_ bytes: [UInt8]) -> [UInt8] {
        let sent = self.writeWithoutWaiting(bytes)
        return sent == bytes.count ? [] : Array(bytes[sent...])
    }

    /// Writes what ``sendWithoutWaiting(_:)`` left: the bytes themselves.
    package func writeLeftover(_ leftover: [UInt8]) async throws {
        try await self.write(leftover)
    }

    /// Half-closes the connection: sends FIN, reads still work. Does nothing after ``close()``.
    package func shutdownOutput() {
        guard (try? self.handle.beginCall(.write, call: "shutdown")) != nil else { return }
        _ = shutdown(self.handle.fd, Int32(SHUT_WR))
        self.handle.endCall()
    }

    /// Closes the connection. Idempotent; pending reads and writes throw a closed ``SocketError``.
    package func close() {
        self.handle.close()
    }

    /// Whether ``close()`` has been called.
    package var isClosed: Bool {
        self.handle.isClosed
    }
}
