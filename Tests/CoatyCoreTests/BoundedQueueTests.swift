import CoatyCore
import Testing

struct BoundedQueueTests {
    @Test func appendingToAFullQueueDropsTheOldest() {
        var queue = BoundedQueue<Int>(capacity: 3)
        #expect(queue.append(1) == nil)
        #expect(queue.append(2) == nil)
        #expect(queue.append(3) == nil)
        #expect(queue.append(4) == 1)
        #expect(Array(queue.elements) == [2, 3, 4])
        #expect(queue.popFirst() == 2)
        #expect(queue.count == 2)
    }

    @Test func prependPutsElementsBackAndDropsTheOldestBeyondCapacity() {
        var queue = BoundedQueue<Int>(capacity: 4)
        queue.append(3)
        queue.append(4)
        #expect(queue.prepend([0, 1, 2]) == [0])
        #expect(queue.removeAll() == [1, 2, 3, 4])
        #expect(queue.isEmpty)
    }

    @Test func longRunsStayInOrderAcrossCompaction() {
        var queue = BoundedQueue<Int>(capacity: 100)
        var expected: [Int] = []
        for value in 0..<10_000 {
            queue.append(value)
            expected.append(value)
            if expected.count > 100 { expected.removeFirst() }
            if value % 3 == 0 { #expect(queue.popFirst() == expected.removeFirst()) }
        }
        #expect(Array(queue.elements) == expected)
    }
}
