import CoatyCore
import Testing

@testable import CoatyBroker

/// ``Outbox/park(wakingReader:)``: the writer task ends so that its connection can wait with no tasks,
/// what would wake it is kept for the next writer task, and the reader is asked, once, to start one.
@Suite(.timeLimit(.minutes(1)))
struct OutboxParkingTests {
    private func publish(_ byte: UInt8) -> Outbox.Item {
        .publish(BrokerMessage(topic: "t", payload: [byte], qos: .atMostOnce), packetID: nil, dup: false)
    }

    private func payloads(_ items: [Outbox.Item]?) -> [UInt8]? {
        items?.compactMap { if case .publish(let message, _, _) = $0 { message.payload.first } else { nil } }
    }

    /// Calls to the reader's wake, as a stream.
    struct ReaderWakes {
        let stream: AsyncStream<Void>
        let continuation: AsyncStream<Void>.Continuation
        init() { (self.stream, self.continuation) = AsyncStream.makeStream() }
        var wake: @Sendable () -> Void { { [continuation] in continuation.yield() } }
    }

    /// An outbox whose writer task was started and then parked.
    private func parkedOutbox(wakes: ReaderWakes) async -> Outbox {
        let outbox = Outbox(socket: nil, capacity: 100, byteCapacity: 1 << 20, unreadLimit: 1 << 20)
        let writer = Task { await outbox.next() }
        var retries = wakes.stream.makeAsyncIterator()
        // Refused until the writer waits; the outbox then asks the reader to try again.
        while !outbox.park(wakingReader: wakes.wake) { await retries.next() }
        #expect(await writer.value == nil, "parking ends the writer task")
        return outbox
    }

    @Test func whatComesWhileParkedGoesToTheNextWriterAndWakesTheReaderOnce() async throws {
        let wakes = ReaderWakes()
        let outbox = await self.parkedOutbox(wakes: wakes)
        #expect(outbox.enqueue(self.publish(1), droppable: true) == .queued)
        #expect(outbox.enqueue(self.publish(2), droppable: true) == .queued)
        wakes.continuation.finish()
        var calls = 0
        for await _ in wakes.stream { calls += 1 }
        #expect(calls == 1)
        #expect(self.payloads(await outbox.next()) == [1])
        outbox.wrote()
        #expect(self.payloads(await outbox.next()) == [2])
    }

    @Test func aNewWriterWaitsInTheParkedWritersPlace() async throws {
        let wakes = ReaderWakes()
        let outbox = await self.parkedOutbox(wakes: wakes)
        let writer = Task { await outbox.next() }
        // Whether the writer asks before the item comes or after, it receives the item.
        #expect(outbox.enqueue(self.publish(3), droppable: true) == .queued)
        #expect(self.payloads(await writer.value) == [3])
    }

    @Test func finishingWhileParkedEndsTheNextWriter() async throws {
        let wakes = ReaderWakes()
        let outbox = await self.parkedOutbox(wakes: wakes)
        outbox.finish()
        var iterator = wakes.stream.makeAsyncIterator()
        await iterator.next()
        #expect(await outbox.next() == nil)
    }

    @Test func parkingIsRefusedWhileTheWriterIsBusyAndRetriedWhenItWaits() async throws {
        let outbox = Outbox(socket: nil, capacity: 100, byteCapacity: 1 << 20, unreadLimit: 1 << 20)
        let wakes = ReaderWakes()
        _ = outbox.enqueue(self.publish(1), droppable: true)
        // The writer takes the batch and is busy writing it.
        #expect(self.payloads(await outbox.next()) == [1])
        #expect(!outbox.park(wakingReader: wakes.wake))
        let writer = Task { () -> [UInt8]? in
            outbox.wrote()
            return self.payloads(await outbox.next())
        }
        var iterator = wakes.stream.makeAsyncIterator()
        await iterator.next()
        #expect(outbox.park(wakingReader: wakes.wake))
        #expect(await writer.value == nil)
    }
}
