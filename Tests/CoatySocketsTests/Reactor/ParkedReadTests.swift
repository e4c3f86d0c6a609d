import Synchronization
import Testing

@testable import CoatySockets

/// `TCPConnection.park(since:handlingUpTo:reader:)`: a reader waiting with no task, over the socket
/// pair of ``InlineReadTests`` whose readiness the test reports itself. The reporting thread handles
/// small reads as for a waiting task, and what would resume a task calls `onWake` once instead.
@Suite(.timeLimit(.minutes(1)))
struct ParkedReadTests {
    typealias Fixture = InlineReadTests.Fixture
    typealias Wake = Result<DirectReadOutcome, any Error>?

    /// What `onWake` was called with, in order.
    struct Wakes {
        let stream: AsyncStream<Wake>
        let continuation: AsyncStream<Wake>.Continuation

        init() { (self.stream, self.continuation) = AsyncStream.makeStream() }

        func first() async -> Wake? {
            var iterator = self.stream.makeAsyncIterator()
            return await iterator.next()
        }

        /// Whether the first wake handed nothing over: the reader is to read for itself.
        func firstIsPlain() async -> Bool {
            guard let wake = await self.first() else { return false }
            return wake == nil
        }
    }

    /// Parks the fixture's reader after a read that found nothing.
    private static func park(
        _ fixture: Fixture,
        limit: Int = 64,
        wakes: Wakes,
        _ consume: @escaping @Sendable ([UInt8]) -> Bool
    ) throws -> Bool {
        guard case .wouldBlock(let edges) = try fixture.connection.readWithoutWaiting(maxBytes: 1024) else {
            Issue.record("expected nothing to read")
            return false
        }
        return fixture.connection.park(
            since: edges,
            handlingUpTo: limit,
            reader: ClosureReader(consume) { wakes.continuation.yield($0) }
        )
    }

    @Test func smallReadsAreHandledWhileParkedUntilTheHandlerStops() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let consumed = InlineReadTests.Consumed()
        let wakes = Wakes()
        #expect(
            try Self.park(fixture, wakes: wakes) { bytes in
                consumed.reads.withLock { $0.append(bytes) }
                return bytes != [3]
            }
        )
        try await fixture.deliver([1])
        try await fixture.deliver([2, 2])
        #expect(consumed.reads.withLock { $0 } == [[1], [2, 2]])
        try await fixture.deliver([3])
        wakes.continuation.finish()
        var iterator = wakes.stream.makeAsyncIterator()
        guard case .success(.handled)? = await iterator.next() ?? nil else {
            Issue.record("expected one wake with the reads handled")
            return
        }
        #expect(await iterator.next() == nil, "woken once")
        #expect(consumed.reads.withLock { $0 } == [[1], [2, 2], [3]])
    }

    @Test func aReadOverTheLimitWakesTheReaderWithTheBytes() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let wakes = Wakes()
        #expect(try Self.park(fixture, limit: 4, wakes: wakes) { _ in true })
        try await fixture.deliver([1, 2, 3, 4, 5])
        guard case .success(.bytes(let bytes))? = await wakes.first() ?? nil else {
            Issue.record("expected the bytes for the reader")
            return
        }
        #expect(bytes == [1, 2, 3, 4, 5])
    }

    @Test func aReportTheThreadMayNotHandleWakesTheReaderToRead() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let wakes = Wakes()
        #expect(try Self.park(fixture, wakes: wakes) { _ in true })
        try await fixture.peer.writeAll([7])
        fixture.handle.signal(readable: true, writable: false, mayHandleReads: false)
        #expect(await wakes.firstIsPlain(), "a wake with nothing handed over")
        guard case .bytes(let bytes) = try fixture.connection.readWithoutWaiting(maxBytes: 16) else {
            Issue.record("expected the byte to be left for the reader")
            return
        }
        #expect(bytes == [7])
    }

    @Test func closingWakesTheParkedReaderWithTheError() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let wakes = Wakes()
        #expect(try Self.park(fixture, wakes: wakes) { _ in true })
        fixture.connection.close()
        guard case .failure(let error)? = await wakes.first() ?? nil else {
            Issue.record("expected the close")
            return
        }
        #expect((error as? SocketError)?.isClosed == true)
    }

    @Test func wakeReaderWakesTheParkedReaderWithNothing() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let wakes = Wakes()
        #expect(try Self.park(fixture, wakes: wakes) { _ in true })
        fixture.connection.wakeReader()
        #expect(await wakes.firstIsPlain(), "a wake with nothing handed over")
    }

    @Test func parkingDeclinesAfterDataCameOrAWakeWasPending() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let wakes = Wakes()
        guard case .wouldBlock(let edges) = try fixture.connection.readWithoutWaiting(maxBytes: 16) else {
            Issue.record("expected nothing to read")
            return
        }
        try await fixture.deliver([1])
        #expect(
            !fixture.connection.park(
                since: edges,
                handlingUpTo: 64,
                reader: ClosureReader({ _ in true }) { wakes.continuation.yield($0) }
            )
        )
        _ = try fixture.connection.readWithoutWaiting(maxBytes: 16)
        fixture.connection.wakeReader()
        #expect(!(try Self.park(fixture, wakes: wakes) { _ in true }), "a wake before parking")
        #expect(try Self.park(fixture, wakes: wakes) { _ in true }, "the pending wake was used once")
        fixture.connection.close()
    }

    @Test func parkingDeclinesOnceClosed() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        guard case .wouldBlock(let edges) = try fixture.connection.readWithoutWaiting(maxBytes: 16) else {
            Issue.record("expected nothing to read")
            return
        }
        fixture.connection.close()
        #expect(!fixture.connection.park(since: edges, handlingUpTo: 64, reader: ClosureReader({ _ in true }) { _ in }))
    }

    @Test func aWakeWhileTheHandlerRunsIsDeliveredAfterIt() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let returned = InlineReadTests.Flag()
        // Whether the handler had returned when the reader was woken.
        let (observed, observer) = AsyncStream<Bool>.makeStream()
        guard case .wouldBlock(let edges) = try fixture.connection.readWithoutWaiting(maxBytes: 16) else {
            Issue.record("expected nothing to read")
            return
        }
        let parked = fixture.connection.park(
            since: edges,
            handlingUpTo: 64,
            reader: ClosureReader(
                { _ in
                    fixture.connection.wakeReader()
                    // The wake must wait for this handler: a woken reader takes over its state.
                    returned.set()
                    return true
                },
                onWake: { _ in observer.yield(returned.isSet) }
            )
        )
        #expect(parked)
        try await fixture.deliver([1])
        var iterator = observed.makeAsyncIterator()
        #expect(await iterator.next() == true)
    }

    @Test func wakeReaderEndsTheWaitOfAWaitingTask() async throws {
        let fixture = try Fixture()
        defer { fixture.peer.close() }
        let reader = await InlineReadTests.waitingReader(fixture)
        fixture.connection.wakeReader()
        guard case .handled = try await reader.value else {
            Issue.record("expected the task to be told to look again")
            return
        }
    }
}

/// A ``ParkedReader`` made of closures: `consume` for its reads, `onWake` for the end of the park.
private final class ClosureReader: ParkedReader {
    let consume: @Sendable ([UInt8]) -> Bool
    let onWake: @Sendable (Result<DirectReadOutcome, any Error>?) -> Void

    init(
        _ consume: @escaping @Sendable ([UInt8]) -> Bool,
        onWake: @escaping @Sendable (Result<DirectReadOutcome, any Error>?) -> Void
    ) {
        self.consume = consume
        self.onWake = onWake
    }

    func handleParkedRead(_ bytes: UnsafeRawBufferPointer) -> Bool { self.consume(Array(bytes)) }

    func parkEnded(_ wake: Result<DirectReadOutcome, any Error>?) { self.onWake(wake) }
}
