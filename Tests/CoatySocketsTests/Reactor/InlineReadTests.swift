import Synchronization
import Testing

@testable import CoatySockets

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `TCPConnection.read(maxBytes:handlingUpTo:_:)` over a socket pair whose readiness reports the test
/// makes itself, standing in for the reactor's thread: which reads the waiting task gets, which the
/// reporting thread handles, and that a close or cancellation never resumes the task while that
/// thread still works for it.
@Suite(.timeLimit(.minutes(1)))
struct InlineReadTests {
    /// A reactor with no thread: the test reports readiness with `SocketHandle.signal`, and learns from
    /// ``armed`` when a waiter is installed (the handle asks the reactor to watch it then).
    final class ManualReactor: Reactor {
        let armed: AsyncStream<Void>
        private let arm: AsyncStream<Void>.Continuation
        private let nextID = Atomic<UInt64>(1)

        init() {
            (self.armed, self.arm) = AsyncStream.makeStream()
        }

        func register(fd: Int32) throws(SocketError) -> SocketHandle {
            SocketHandle(fd: fd, id: self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue, reactor: self)
        }

        func deregister(_ handle: SocketHandle) {}

        func watch(_ handle: SocketHandle, for direction: SocketHandle.Direction) {
            if direction == .read { self.arm.yield() }
        }
    }

    /// A connection over one end of a socket pair, the other end for the test to write to.
    struct Fixture {
        let reactor = ManualReactor()
        let connection: TCPConnection
        let handle: SocketHandle
        let peer: SocketHandle

        init() throws {
            let pair = try SocketPair(on: self.reactor)
            self.handle = pair.first
            self.peer = pair.second
            self.connection = TCPConnection(handle: pair.first, remoteDescription: "pair", acknowledgesAtOnce: false)
        }

        /// Writes `bytes` to the connection and reports them as the reactor's thread would.
        func deliver(_ bytes: [UInt8]) async throws {
            try await self.peer.writeAll(bytes)
            self.handle.signal(readable: true, writable: false, mayHandleReads: true)
        }
    }

    /// Set once, by the handler, as its last act.
    final class Flag: Sendable {
        private let value = Atomic(false)
        var isSet: Bool { self.value.load(ordering: .sequentiallyConsistent) }
        func set() { self.value.store(true, ordering: .sequentiallyConsistent) }
    }

    /// The bytes the reporting thread handed over, in order.
    final class Consumed: Sendable {
        let reads = Mutex<[[UInt8]]>([])
    }

    @Test func smallReadsAreHandledByTheReportingThreadUntilTheHandlerStops() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let consumed = Consumed()
        let reader = Task {
            try await fixture.connection.read(maxBytes: 1024, handlingUpTo: 64) { read in
                let bytes = Array(read)
                consumed.reads.withLock { $0.append(bytes) }
                return bytes != [3]
            }
        }
        var armed = fixture.reactor.armed.makeAsyncIterator()
        await armed.next()
        try await fixture.deliver([1])
        // Handled synchronously by this thread; the handler asked to keep waiting, so it re-armed.
        #expect(consumed.reads.withLock { $0 } == [[1]])
        await armed.next()
        try await fixture.deliver([2, 2])
        #expect(consumed.reads.withLock { $0 } == [[1], [2, 2]])
        await armed.next()
        try await fixture.deliver([3])
        guard case .handled = try await reader.value else {
            Issue.record("expected the reads to have been handled for the task")
            return
        }
        #expect(consumed.reads.withLock { $0 } == [[1], [2, 2], [3]])
    }

    @Test func aReadOverTheLimitGoesToTheTask() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let consumed = Consumed()
        let reader = Task {
            try await fixture.connection.read(maxBytes: 1024, handlingUpTo: 4) { read in
                consumed.reads.withLock { $0.append(Array(read)) }
                return true
            }
        }
        var armed = fixture.reactor.armed.makeAsyncIterator()
        await armed.next()
        try await fixture.deliver([1, 2, 3, 4, 5])
        guard case .bytes(let bytes) = try await reader.value else {
            Issue.record("expected the bytes for the task")
            return
        }
        #expect(bytes == [1, 2, 3, 4, 5])
        #expect(consumed.reads.withLock { $0 }.isEmpty)
    }

    /// Reads `[1]`, during which the peer writes `[2]`, in a turn reported with `shortReadDrains`;
    /// returns what the turn handed over, and then what the next report's turn did.
    private func shortReadTurn(shortReadDrains: Bool) async throws -> (turn: [[UInt8]], next: [[UInt8]]) {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let consumed = Consumed()
        let peerFD = fixture.peer.fd
        let reader = Task {
            try await fixture.connection.read(maxBytes: 1024, handlingUpTo: 64) { read in
                let bytes = Array(read)
                consumed.reads.withLock { $0.append(bytes) }
                if bytes == [1] {
                    var more: UInt8 = 2
                    #expect(write(peerFD, &more, 1) == 1)
                }
                return !bytes.contains(3)
            }
        }
        var armed = fixture.reactor.armed.makeAsyncIterator()
        await armed.next()
        try await fixture.peer.writeAll([1])
        fixture.handle.signal(readable: true, writable: false, mayHandleReads: true, shortReadDrains: shortReadDrains)
        let turn = consumed.reads.withLock { $0 }
        try await fixture.deliver([3])
        _ = try await reader.value
        return (turn, consumed.reads.withLock { $0 })
    }

    @Test func aShortReadEndsTheTurnOnlyWhenTheReportSaysItDrains() async throws {
        // Edge-triggered with no hang-up: the short read stands for EAGAIN; the [2] that came after it
        // waits for the next report, which brings it.
        let drains = try await self.shortReadTurn(shortReadDrains: true)
        #expect(drains.turn == [[1]])
        #expect(drains.next == [[1], [2, 3]] || drains.next == [[1], [2], [3]])
        // Otherwise the turn reads on until EAGAIN and gets the [2] at once.
        let readsOn = try await self.shortReadTurn(shortReadDrains: false)
        #expect(readsOn.turn == [[1], [2]])
        #expect(readsOn.next == [[1], [2], [3]])
    }

    @Test func theEndOfTheStreamGoesToTheTask() async throws {
        let fixture = try Fixture()
        let reader = Task {
            try await fixture.connection.read(maxBytes: 1024, handlingUpTo: 64) { _ in true }
        }
        var armed = fixture.reactor.armed.makeAsyncIterator()
        await armed.next()
        fixture.peer.close()
        fixture.handle.signal(readable: true, writable: false, mayHandleReads: true)
        guard case .bytes(let bytes) = try await reader.value else {
            Issue.record("expected the end of the stream for the task")
            return
        }
        #expect(bytes.isEmpty)
    }

    @Test func aCloseWhileTheHandlerRunsResumesTheTaskAfterIt() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let observed = try await Self.resumption(of: fixture) { _ in fixture.connection.close() }
        #expect((observed.error as? SocketError)?.isClosed == true)
        #expect(observed.handlerHadReturned)
    }

    @Test func aCancellationWhileTheHandlerRunsResumesTheTaskAfterIt() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let observed = try await Self.resumption(of: fixture) { reader in reader.cancel() }
        #expect(observed.error is CancellationError)
        #expect(observed.handlerHadReturned)
    }

    /// Runs an inline read whose handler calls `interrupt` with the reading task, and reports what the
    /// task threw and whether the handler had returned when the task resumed.
    ///
    /// After `interrupt` the handler gives the task a moment (up to 10,000 thread yields) to resume
    /// early, which it must not do while the handler runs; the handler's return is then recorded.
    private static func resumption(
        of fixture: Fixture,
        interrupt: @escaping @Sendable (Task<Bool, Never>) -> Void
    ) async throws -> (error: (any Error)?, handlerHadReturned: Bool) {
        let returned = Flag()
        let resumed = Flag()
        let readerTask = Mutex<Task<Bool, Never>?>(nil)
        let errorBox = Mutex<(any Error)?>(nil)
        let reader = Task {
            do {
                _ = try await fixture.connection.read(maxBytes: 1024, handlingUpTo: 64) { _ in
                    if let task = readerTask.withLock({ $0 }) { interrupt(task) }
                    for _ in 0..<10_000 where !resumed.isSet { sched_yield() }
                    returned.set()
                    return true
                }
            } catch {
                errorBox.withLock { $0 = error }
            }
            resumed.set()
            return returned.isSet
        }
        readerTask.withLock { $0 = reader }
        var armed = fixture.reactor.armed.makeAsyncIterator()
        await armed.next()
        try await fixture.deliver([1])
        let handlerHadReturned = await reader.value
        return (errorBox.withLock { $0 }, handlerHadReturned)
    }

    /// Starts a task reading from the fixture's connection with a handler that keeps waiting, and
    /// returns it once it waits.
    static func waitingReader(_ fixture: Fixture) async -> Task<DirectReadOutcome, any Error> {
        let reader = Task {
            try await fixture.connection.read(maxBytes: 1024, handlingUpTo: 64) { _ in true }
        }
        var armed = fixture.reactor.armed.makeAsyncIterator()
        await armed.next()
        return reader
    }

    @Test func cancellingTheWaitingTaskThrowsCancellation() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let reader = await Self.waitingReader(fixture)
        reader.cancel()
        await #expect(throws: CancellationError.self) { try await reader.value }
    }
}
