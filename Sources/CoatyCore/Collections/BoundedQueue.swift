/// A FIFO queue with a capacity: appending to a full queue drops the oldest element.
///
/// The one queue policy used for every bounded buffer of the framework (the communication manager's
/// offline queue, the broker's per-session queues). Backed by an array with a moving head that is
/// compacted lazily, so both ends are amortised O(1).
///
/// It is public, and its element operations are `@inlinable`, because the event streams of
/// `CoatyCommunication` use it in code that is inlined into the app's module
/// (`EventStream.first(timeout:)`): unspecialised generic code would look up the queue's metadata at
/// run time on every call. Apps may use it too; the bulk operations the framework needs stay `package`.
public struct BoundedQueue<Element> {
    @usableFromInline var storage: [Element] = []
    @usableFromInline var head = 0

    /// The most elements held at once.
    public let capacity: Int

    /// Creates an empty queue holding at most `capacity` (at least 1) elements.
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The number of queued elements.
    @inlinable public var count: Int { self.storage.count - self.head }

    /// Whether the queue is empty.
    @inlinable public var isEmpty: Bool { self.count == 0 }

    /// The queued elements, oldest first.
    package var elements: ArraySlice<Element> { self.storage[self.head...] }

    /// Appends an element, dropping and returning the oldest one if the queue was full.
    @discardableResult
    @inlinable public mutating func append(_ element: Element) -> Element? {
        var dropped: Element?
        if self.count >= self.capacity { dropped = self.popFirst() }
        self.storage.append(element)
        return dropped
    }

    /// Removes and returns the oldest element.
    @inlinable public mutating func popFirst() -> Element? {
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

    /// Appends an element even when the queue is full, so that it holds more than `capacity` until
    /// elements are taken; the next ``append(_:)`` to the over-full queue drops the oldest as usual.
    package mutating func appendBeyondCapacity(_ element: Element) {
        self.storage.append(element)
    }

    /// Removes every element that `shouldRemove` selects, keeping the order of the others; returns
    /// whether any was removed.
    @discardableResult
    package mutating func removeAll(where shouldRemove: (Element) throws -> Bool) rethrows -> Bool {
        let kept = try self.elements.filter { try !shouldRemove($0) }
        guard kept.count != self.count else { return false }
        self.storage = kept
        self.head = 0
        return true
    }

    /// Moves every element, oldest first, to the end of `destination`.
    package mutating func moveAll(appendingTo destination: inout [Element]) {
        destination.append(contentsOf: self.elements)
        self.storage.removeAll(keepingCapacity: self.storage.count <= 64)
        self.head = 0
    }

    /// Removes and returns every element, oldest first.
    package mutating func removeAll() -> [Element] {
        let elements = Array(self.elements)
        self.storage.removeAll(keepingCapacity: true)
        self.head = 0
        return elements
    }

    /// Puts elements back at the front (taken but not delivered), dropping beyond capacity from the
    /// oldest; returns the dropped ones.
    package mutating func prepend(_ elements: [Element]) -> [Element] {
        var all = elements + Array(self.elements)
        var dropped: [Element] = []
        if all.count > self.capacity {
            dropped = Array(all.prefix(all.count - self.capacity))
            all.removeFirst(all.count - self.capacity)
        }
        self.storage = all
        self.head = 0
        return dropped
    }
}

extension BoundedQueue: Sendable where Element: Sendable {}
