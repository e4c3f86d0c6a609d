import Synchronization
import TestSupport
import Testing

@testable import CoatySockets
@testable import CoatyTLS

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `TLSConnection` as a ``DirectByteStream``: the reactor's thread decrypting small reads for a
/// handler while the reading task waits, and writes that send what the socket takes and leave the
/// rest, encrypted, for later.
///
/// The server end runs over one end of a Unix socket pair whose readiness reports the test makes
/// itself, standing in for the reactor's thread; the client end is a `TLSEngine` driven in memory, so
/// the test decides exactly which records arrive before each report.
@Suite(
    .enabled(if: TestCertificates.isAvailable, "needs openssl and libssl3"),
    .timeLimit(.minutes(1))
)
struct TLSDirectStreamTests {
    /// A reactor with no thread: the test reports readiness with `SocketHandle.signal`, and learns from
    /// ``armed`` when a read waiter is installed.
    final class ManualReactor: Reactor {
        let armed: AsyncStream<Void>
        private let arm: AsyncStream<Void>.Continuation
        private let nextID = Atomic<UInt64>(1)

        init() { (self.armed, self.arm) = AsyncStream.makeStream() }

        func register(fd: Int32) throws(SocketError) -> SocketHandle {
            SocketHandle(fd: fd, id: self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue, reactor: self)
        }

        func deregister(_ handle: SocketHandle) {}

        func watch(_ handle: SocketHandle, for direction: SocketHandle.Direction) {
            if direction == .read { self.arm.yield() }
        }
    }

    /// The client's end: a `TLSEngine` in memory and its end of the socket pair. Used by the test's
    /// task only.
    final class MemoryClient: @unchecked Sendable {
        let engine: TLSEngine
        let fd: Int32

        init(engine: TLSEngine, fd: Int32) {
            self.engine = engine
            self.fd = fd
        }

        /// Encrypts each message as a record of its own and writes them all in one go.
        func encryptAndSend(_ messages: [[UInt8]]) throws {
            var records: [UInt8] = []
            for message in messages { records += try self.engine.encrypt([message]) }
            let sent = records.withUnsafeBytes { send(self.fd, $0.baseAddress, $0.count, 0) }
            try #require(sent == records.count)
        }
    }

    /// A server `TLSConnection` after a completed handshake with a ``MemoryClient``.
    struct Fixture: Sendable {
        let reactor = ManualReactor()
        let server: TLSConnection
        let handle: SocketHandle
        let client: MemoryClient

        init(_ certificates: TestCertificates) throws {
            var fds: [Int32] = [-1, -1]
            try #require(socketpair(AF_UNIX, PlatformShims.streamSocketType, 0, &fds) == 0, "errno \(errno)")
            PlatformShims.setNonBlockingCloseOnExec(fds[0])
            self.handle = try self.reactor.register(fd: fds[0])
            let engines = try MemoryEnginePair(certificates)
            self.client = MemoryClient(engine: engines.client, fd: fds[1])
            let tcp = TCPConnection(handle: self.handle, remoteDescription: "pair", acknowledgesAtOnce: false)
            self.server = TLSConnection(tcp: tcp, engine: engines.server)
        }

        /// Has the client send `messages`, each a record of its own, in one write, then reports them
        /// as the reactor's thread would.
        func deliver(_ messages: [[UInt8]]) throws {
            try self.client.encryptAndSend(messages)
            self.handle.signal(readable: true, writable: false, mayHandleReads: true)
        }

        func close() {
            self.server.close()
            PlatformShims.close(self.client.fd)
        }
    }

    /// What the handler was given, in order.
    final class Consumed: Sendable {
        let reads = Mutex<[[UInt8]]>([])
        var all: [[UInt8]] { self.reads.withLock { $0 } }
    }

    /// Starts a read on a fresh fixture's server whose handler records what it is given and goes on
    /// while `goesOn` says so, waits until the read waits, then runs `body`.
    private func whileReading(
        maxBytes: Int = 1024,
        goesOn: @escaping @Sendable ([UInt8]) -> Bool,
        _ body: (Fixture, Consumed, Task<DirectReadOutcome, any Error>) async throws -> Void
    ) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let fixture = try Fixture(certificates)
        defer { fixture.close() }
        let consumed = Consumed()
        var armed = fixture.reactor.armed.makeAsyncIterator()
        let reader = Task {
            try await fixture.server.read(maxBytes: maxBytes, handlingUpTo: 256) { read in
                let bytes = Array(read)
                consumed.reads.withLock { $0.append(bytes) }
                return goesOn(bytes)
            }
        }
        await armed.next()
        try await body(fixture, consumed, reader)
    }

    @Test func smallRecordsAreDecryptedForTheHandlerUntilItStops() async throws {
        try await self.whileReading(goesOn: { $0 != [3] }) { fixture, consumed, reader in
            try fixture.deliver([[1]])
            #expect(consumed.all == [[1]])
            try fixture.deliver([[2]])
            #expect(consumed.all == [[1], [2]])
            try fixture.deliver([[3]])
            guard case .handled = try await reader.value else {
                Issue.record("expected the reporting thread to have handled the reads")
                return
            }
            #expect(consumed.all == [[1], [2], [3]])
        }
    }

    @Test func whatTheHandlerWasNotGivenIsReadNext() async throws {
        try await self.whileReading(goesOn: { _ in false }) { fixture, consumed, reader in
            // Two records in one socket read: the handler stops after the first.
            try fixture.deliver([[1], [2]])
            guard case .handled = try await reader.value else {
                Issue.record("expected the reporting thread to have handled the first record")
                return
            }
            #expect(consumed.all == [[1]])
            // Already decrypted: returned without a report.
            #expect(try await fixture.server.read(maxBytes: 1024) == [2])
        }
    }

    @Test func aLargeReadGoesToTheTaskDecrypted() async throws {
        try await self.whileReading(maxBytes: 4096, goesOn: { _ in true }) { fixture, consumed, reader in
            let large = [UInt8](repeating: 7, count: 1000)
            try fixture.deliver([large])
            guard case .bytes(let bytes) = try await reader.value else {
                Issue.record("expected the read to go to the task")
                return
            }
            #expect(bytes == large)
            #expect(consumed.all.isEmpty)
        }
    }

    /// Over loopback TCP on the shared reactor: the leftover is written by a task that waits for room.
    @Test func aSendTheSocketCannotTakeWholeLeavesEncryptedBytesThatFollowInOrder() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let listener = try TCPListener.bind()
        defer { listener.close() }
        let serverContext = try TLSContext(
            TLSConfiguration(
                role: .server,
                peerVerification: .none,
                certificateChain: .file(certificates.path("server.pem")),
                privateKey: .file(certificates.path("server.key"))
            )
        )
        async let accepted = TLSConnection.accept(try await listener.accept(), context: serverContext)
        let client = try await TLSConnection.connect(
            host: "127.0.0.1",
            port: listener.port,
            context: TLSContext(TLSConfiguration(role: .client, peerVerification: .none))
        )
        defer { client.close() }
        let server = try await accepted
        defer { server.close() }
        // Far more than a fresh loopback connection's buffers take at once.
        let first = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let leftover = server.sendWithoutWaiting(first)
        #expect(!leftover.isEmpty)
        let second: [UInt8] = [9, 8, 7]
        async let writing: Void = {
            try await server.writeLeftover(leftover)
            try await server.write(second)
        }()
        var received: [UInt8] = []
        while received.count < first.count + second.count {
            let bytes = try await client.read(maxBytes: 1 << 16)
            try #require(!bytes.isEmpty)
            received += bytes
        }
        try await writing
        #expect(received == first + second)
    }
}
