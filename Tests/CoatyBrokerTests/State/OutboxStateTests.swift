import CoatyCore
import Testing

@testable import CoatyBroker

/// The outbox's queue and its hand-over between the writer task and a reader's direct write.
struct OutboxStateTests {
    private func publish(_ byte: UInt8, bytes: Int = 1) -> Outbox.Item {
        .publish(
            BrokerMessage(topic: "t", payload: [UInt8](repeating: byte, count: bytes), qos: .atMostOnce),
            packetID: nil,
            dup: false
        )
    }

    /// A state whose writer task waits for items.
    private func waitingWriter(unreadLimit: Int = 1 << 20) -> OutboxState {
        var state = OutboxState(capacity: 100, byteCapacity: 1 << 20, unreadLimit: unreadLimit)
        guard case .wait = state.next() else {
            Issue.record("an empty outbox's writer should wait")
            return state
        }
        return state
    }

    private func payloads(_ items: [Outbox.Item]) -> [UInt8] {
        items.compactMap { if case .publish(let message, _, _) = $0 { message.payload.first } else { nil } }
    }

    @Test func aReaderClaimsAnIdleWriterOnceAndWritesTheBatchItself() throws {
        var state = self.waitingWriter()
        let first = state.enqueue(self.publish(1), droppable: true, mayClaim: true)
        #expect(first.result == .queued && first.claimed && first.wake == nil)
        #expect(state.writer == .claimed)
        // Later packets of the same read, or from other readers, only append.
        let second = state.enqueue(self.publish(2), droppable: true, mayClaim: true)
        #expect(!second.claimed && second.wake == nil)
        guard case .write(let items) = state.beginDirectWrite() else {
            Issue.record("a claimed outbox with items should be written")
            return
        }
        #expect(self.payloads(items) == [1, 2])
        #expect(state.writer == .writingDirectly)
        #expect(state.unreadBytes == 2 * self.publish(1).encodedSize)
        #expect(state.batchesTaken == 1)
        let end = state.endDirectWrite(unsent: [], messages: 2)
        #expect(end.wakeWriter == nil && !end.wakeReader && !end.readerWasWaiting)
        // The writer task keeps waiting, and the next read may claim again.
        #expect(state.writer == .waiting)
        #expect(state.unreadBytes == 0)
        #expect(state.enqueue(self.publish(3), droppable: true, mayClaim: true).claimed)
    }

    @Test func aClaimedBulkBatchGoesToTheWriterTask() {
        var state = self.waitingWriter()
        for byte in 0...UInt8(OutboxState.directWriteItemLimit) {
            _ = state.enqueue(self.publish(byte), droppable: true, mayClaim: true)
        }
        guard case .skip(.items(let items)) = state.beginDirectWrite() else {
            Issue.record("a batch of more than the limit should wake the writer task")
            return
        }
        #expect(items.count == OutboxState.directWriteItemLimit + 1)
        #expect(state.writer == .busy)
    }

    @Test func withoutAClaimAWaitingWriterIsWokenWithTheItem() {
        var state = self.waitingWriter()
        let result = state.enqueue(self.publish(1), droppable: true, mayClaim: false)
        #expect(!result.claimed)
        #expect(self.payloads(result.wake ?? []) == [1])
        #expect(state.writer == .busy)
        #expect(state.unreadBytes == self.publish(1).encodedSize)
    }

    @Test func aBusyWriterIsNeverClaimedAndBatchesWhatArrives() {
        var state = OutboxState(capacity: 100, byteCapacity: 1 << 20, unreadLimit: 1 << 20)
        // Before the writer task first asks, and while it writes, enqueues only append.
        #expect(!state.enqueue(self.publish(1), droppable: true, mayClaim: true).claimed)
        guard case .write(let first) = state.next() else {
            Issue.record("queued items should be taken")
            return
        }
        #expect(self.payloads(first) == [1])
        #expect(!state.enqueue(self.publish(2), droppable: true, mayClaim: true).claimed)
        #expect(!state.enqueue(self.publish(3), droppable: true, mayClaim: true).claimed)
        _ = state.wrote()
        guard case .write(let second) = state.next() else {
            Issue.record("queued items should be taken")
            return
        }
        #expect(self.payloads(second) == [2, 3])
        #expect(state.writer == .busy)
    }

    @Test func whatTheSocketDidNotTakeGoesToTheWriterBeforeLaterItems() {
        var state = self.waitingWriter()
        _ = state.enqueue(self.publish(1), droppable: true, mayClaim: true)
        _ = state.beginDirectWrite()
        // Queued during the direct write: must not overtake its unsent bytes.
        let during = state.enqueue(self.publish(2), droppable: true, mayClaim: true)
        #expect(!during.claimed && during.wake == nil)
        let batch = self.publish(1).encodedSize
        let end = state.endDirectWrite(unsent: [7, 8, 9], messages: 1)
        guard case .unsent = end.wakeWriter else {
            Issue.record("the unsent bytes should go to the writer task")
            return
        }
        let unsent = state.takeUnsent()
        #expect(unsent.bytes == [7, 8, 9] && unsent.messages == 1)
        #expect(state.writer == .busy)
        // Still unread until the writer task has written them.
        #expect(state.unreadBytes == batch + self.publish(2).encodedSize)
        _ = state.wrote()
        guard case .write(let later) = state.next() else {
            Issue.record("the item queued meanwhile should follow")
            return
        }
        #expect(self.payloads(later) == [2])
    }

    @Test func itemsQueuedDuringADirectWriteWakeTheWriter() {
        var state = self.waitingWriter()
        _ = state.enqueue(self.publish(1), droppable: true, mayClaim: true)
        _ = state.beginDirectWrite()
        _ = state.enqueue(self.publish(2), droppable: true, mayClaim: false)
        let end = state.endDirectWrite(unsent: [], messages: 1)
        guard case .items(let items) = end.wakeWriter else {
            Issue.record("the items queued meanwhile should wake the writer task")
            return
        }
        #expect(self.payloads(items) == [2])
        #expect(state.writer == .busy)
    }

    @Test func finishingDuringADirectWriteEndsTheWriterOnlyAfterIt() {
        var state = self.waitingWriter()
        _ = state.enqueue(self.publish(1), droppable: true, mayClaim: true)
        #expect(state.finish() == (endWriter: false, wakeReader: false))
        guard case .write(let items) = state.beginDirectWrite() else {
            Issue.record("a finished outbox still drains what is queued")
            return
        }
        #expect(self.payloads(items) == [1])
        guard case .end = state.endDirectWrite(unsent: [], messages: 1).wakeWriter else {
            Issue.record("the writer task should end after the direct write")
            return
        }
    }

    @Test func anAbortedClaimSkipsTheWriteAndEndsTheWriter() {
        var state = self.waitingWriter()
        _ = state.enqueue(self.publish(1), droppable: true, mayClaim: true)
        state.abort(reason: "test")
        _ = state.finish()
        guard case .skip(.end) = state.beginDirectWrite() else {
            Issue.record("an aborted outbox has nothing to write and ends its writer")
            return
        }
        #expect(state.writer == .busy)
    }

    @Test func aDirectWriteThatMakesRoomWakesTheWaitingReader() {
        // pauseBytes is half the unread limit: 50 bytes.
        var state = self.waitingWriter(unreadLimit: 100)
        _ = state.enqueue(self.publish(1, bytes: 60), droppable: false, mayClaim: true)
        #expect(state.needsRoom)
        #expect(state.waitForRoom() == nil)
        _ = state.beginDirectWrite()
        let end = state.endDirectWrite(unsent: [], messages: 1)
        #expect(end.wakeReader && end.readerWasWaiting)
        #expect(!state.isReaderWaiting)
    }

    @Test func aPartialDirectWriteKeepsTheReaderWaiting() {
        var state = self.waitingWriter(unreadLimit: 100)
        _ = state.enqueue(self.publish(1, bytes: 60), droppable: false, mayClaim: true)
        #expect(state.waitForRoom() == nil)
        _ = state.beginDirectWrite()
        let end = state.endDirectWrite(unsent: [1], messages: 1)
        #expect(!end.wakeReader)
        #expect(state.isReaderWaiting)
        // The writer task finishes the batch: now there is room.
        let wrote = state.wrote()
        #expect(wrote.wakeReader && wrote.readerWasWaiting)
    }
}
