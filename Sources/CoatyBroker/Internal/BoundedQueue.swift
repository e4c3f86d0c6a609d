/// A FIFO queue with a capacity; appending to a full queue drops the oldest element.
///
/// Backed by an array with a moving head that is compacted lazily, so both ends are amortised O(1).
struct BoundedQueue<Element: Sendable>: Sendable {
    private var storage: [Element] = []
    private var head = 0

    /// The most elements held at once.
    let capacity: Int

    /// Creates an empty queue holding at most `capacity` (at least 1) elements.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The number of queued elements.
    var count: Int { self.storage.count - self.head }

    /// Whether the queue is empty.
    var isEmpty: Bool { self.count == 0 }

    /// Appends an element, dropping and returning the oldest one if the queue was full.
    @discardableResult
    mutating func append(_ element: Element) -> Element? {
        var dropped: Element?
        if self.count >= self.capacity { dropped = self.popFirst() }
        self.storage.append(element)
        return dropped
    }

    /// Removes and returns the oldest element.
    mutating func popFirst() -> Element? {
        guard self.head < self.storage.count else { return nil }
        let element = self.storage[self.head]
        self.head += 1
        if self.head == self.storage.count {
            self.storage.removeAll(keepingCapacity: self.storage.count <= 64)
            self.head = 0
        } else if self.head >= 64, self.head * 2 >= self.storage.count {
            self.storage.removeFirst(self.head)
            self.head = 0
        }
        return element
    }

    /// The queued elements, oldest first.
    var elements: ArraySlice<Element> { self.storage[self.head...] }
}
