/// A FIFO queue with a capacity; appending to a full queue drops the oldest element.
struct BoundedQueue<Element> {
    private var storage: [Element] = []
    private var head = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var count: Int { self.storage.count - self.head }
    var isEmpty: Bool { self.count == 0 }

    /// Appends `element`; returns the element dropped to make room, if any.
    mutating func append(_ element: Element) -> Element? {
        var dropped: Element?
        if self.count >= self.capacity {
            dropped = self.storage[self.head]
            self.head += 1
        }
        self.storage.append(element)
        self.compactIfNeeded()
        return dropped
    }

    /// Removes and returns every element, oldest first.
    mutating func removeAll() -> [Element] {
        let elements = Array(self.storage[self.head...])
        self.storage.removeAll(keepingCapacity: true)
        self.head = 0
        return elements
    }

    /// Puts elements back at the front (they were taken but not sent), dropping beyond capacity from
    /// the oldest; returns the dropped ones.
    mutating func prepend(_ elements: [Element]) -> [Element] {
        var all = elements + Array(self.storage[self.head...])
        var dropped: [Element] = []
        if all.count > self.capacity {
            dropped = Array(all.prefix(all.count - self.capacity))
            all.removeFirst(all.count - self.capacity)
        }
        self.storage = all
        self.head = 0
        return dropped
    }

    private mutating func compactIfNeeded() {
        if self.head > 64 && self.head * 2 > self.storage.count {
            self.storage.removeFirst(self.head)
            self.head = 0
        }
    }
}

extension BoundedQueue: Sendable where Element: Sendable {}
