/// A list that keeps its first element inline, so a list of one element allocates nothing.
///
/// Routing is full of such lists: most filters have one observer, most last levels one filter (a
/// request's correlation id), and most messages one receiver. Registering and releasing a request's
/// response route, and routing its response, then allocate no array.
struct InlineList<Element: Sendable>: Sendable, Sequence {
    private var first: Element?
    private var rest: [Element] = []

    /// An empty list.
    init() {}

    /// A list of one element.
    init(_ element: Element) {
        self.first = element
    }

    var isEmpty: Bool { self.first == nil }

    mutating func append(_ element: Element) {
        if self.first == nil { self.first = element } else { self.rest.append(element) }
    }

    /// Sorts the list in place; a list of one element is left as it is without allocating.
    mutating func sort(by areInIncreasingOrder: (Element, Element) -> Bool) {
        guard let first = self.first, !self.rest.isEmpty else { return }
        var all = [first] + self.rest
        all.sort(by: areInIncreasingOrder)
        self.first = all.removeFirst()
        self.rest = all
    }

    func makeIterator() -> Iterator { Iterator(first: self.first, rest: self.rest.makeIterator()) }

    /// Calls `body` on each element, in order. A `for` loop copies the list into an ``Iterator`` (a
    /// retain per reference in the inline element, and one for the rest); this reads it in place.
    func forEach(_ body: (Element) throws -> Void) rethrows {
        if let first = self.first { try body(first) }
        for element in self.rest { try body(element) }
    }

    /// Whether an element satisfies `predicate`, read in place as ``forEach(_:)`` reads them.
    func contains(where predicate: (Element) throws -> Bool) rethrows -> Bool {
        if let first = self.first, try predicate(first) { return true }
        return try self.rest.contains(where: predicate)
    }

    struct Iterator: IteratorProtocol {
        fileprivate var first: Element?
        fileprivate var rest: IndexingIterator<[Element]>

        mutating func next() -> Element? {
            if let first = self.first {
                self.first = nil
                return first
            }
            return self.rest.next()
        }
    }
}

extension InlineList: Equatable where Element: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.elementsEqual(rhs) }

    /// Removes the first occurrence of `element`; returns whether there was one.
    mutating func remove(_ element: Element) -> Bool {
        if self.first == element {
            self.first = self.rest.isEmpty ? nil : self.rest.removeFirst()
            return true
        }
        guard let index = self.rest.firstIndex(of: element) else { return false }
        self.rest.remove(at: index)
        return true
    }

    /// Removes every occurrence of `element`. Returns `true` if nothing is left, and a list kept as a
    /// dictionary's value must then be discarded.
    mutating func removeAll(_ element: Element) -> Bool {
        self.rest.removeAll { $0 == element }
        guard self.first == element else { return self.first == nil }
        guard !self.rest.isEmpty else {
            self.first = nil
            return true
        }
        self.first = self.rest.removeFirst()
        return false
    }
}

extension Dictionary {
    /// Appends `element` to the list under `key`, starting the list if there is none. Looks the key up
    /// once. Returns whether the list is new.
    @discardableResult
    mutating func append<Element>(_ element: Element, forKey key: Key) -> Bool
    where Value == InlineList<Element> {
        if let index = self.index(forKey: key) {
            self.values[index].append(element)
            return false
        }
        self[key] = InlineList(element)
        return true
    }

    /// Removes `element` from the list under `key`, and the list once it is empty. Looks the key up
    /// once. Returns whether no list is left under `key`.
    @discardableResult
    mutating func remove<Element: Equatable>(_ element: Element, forKey key: Key) -> Bool
    where Value == InlineList<Element> {
        guard let index = self.index(forKey: key) else { return true }
        guard self.values[index].removeAll(element) else { return false }
        self.remove(at: index)
        return true
    }
}
