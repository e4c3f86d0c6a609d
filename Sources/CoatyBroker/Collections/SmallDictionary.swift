/// A dictionary that holds a single entry inline, and more in a `Dictionary`.
///
/// The broker keeps many maps that mostly hold one entry: the subscribers of a topic filter (a
/// client's own topics, such as Coaty's per-agent and per-request response topics) and the
/// subscriptions of a session. A `Dictionary` with one entry allocates about 90 bytes; this does
/// not (see Docs/Broker.md, memory per connection). Order of iteration is unspecified, as a
/// dictionary's.
struct SmallDictionary<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private enum Storage: Sendable {
        case none
        case one(Key, Value)
        case many([Key: Value])
    }

    private var storage = Storage.none

    init() {}

    init(_ dictionary: [Key: Value]) {
        self.storage = Self.storage(for: dictionary)
    }

    private static func storage(for dictionary: [Key: Value]) -> Storage {
        switch dictionary.count {
        case 0: .none
        case 1: .one(dictionary.first!.key, dictionary.first!.value)
        default: .many(dictionary)
        }
    }

    var isEmpty: Bool {
        if case .none = self.storage { return true }
        return false
    }

    var count: Int {
        switch self.storage {
        case .none: 0
        case .one: 1
        case .many(let all): all.count
        }
    }

    /// The value of the one entry, when there is exactly one.
    var onlyValue: Value? {
        if case .one(_, let value) = self.storage { return value }
        return nil
    }

    /// The entries as a `Dictionary`.
    var dictionary: [Key: Value] {
        switch self.storage {
        case .none: [:]
        case .one(let key, let value): [key: value]
        case .many(let all): all
        }
    }

    subscript(key: Key) -> Value? {
        get {
            switch self.storage {
            case .none: nil
            case .one(let existing, let value): existing == key ? value : nil
            case .many(let all): all[key]
            }
        }
        set {
            if let newValue {
                _ = self.updateValue(newValue, forKey: key)
            } else {
                _ = self.removeValue(forKey: key)
            }
        }
    }

    /// Adds or replaces the value of `key`; returns the value it replaced, if any.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        switch self.storage {
        case .none:
            self.storage = .one(key, value)
            return nil
        case .one(let existing, let previous):
            if existing == key {
                self.storage = .one(key, value)
                return previous
            }
            self.storage = .many([existing: previous, key: value])
            return nil
        case .many(var all):
            // Let go of the storage's reference first, so the dictionary is changed in place.
            self.storage = .none
            let previous = all.updateValue(value, forKey: key)
            self.storage = .many(all)
            return previous
        }
    }

    /// Removes `key`; returns its value if it was there.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        switch self.storage {
        case .none:
            return nil
        case .one(let existing, let value):
            guard existing == key else { return nil }
            self.storage = .none
            return value
        case .many(var all):
            self.storage = .none
            let removed = all.removeValue(forKey: key)
            self.storage = Self.storage(for: all)
            return removed
        }
    }

    /// The keys, in no particular order.
    var keys: [Key] { self.map(\.key) }
}

extension SmallDictionary: Sequence {
    struct Iterator: IteratorProtocol {
        fileprivate var single: (key: Key, value: Value)?
        fileprivate var rest: Dictionary<Key, Value>.Iterator?

        mutating func next() -> (key: Key, value: Value)? {
            if let single = self.single {
                self.single = nil
                return single
            }
            return self.rest?.next()
        }
    }

    func makeIterator() -> Iterator {
        switch self.storage {
        case .none: Iterator(single: nil, rest: nil)
        case .one(let key, let value): Iterator(single: (key, value), rest: nil)
        case .many(let all): Iterator(single: nil, rest: all.makeIterator())
        }
    }

    var underestimatedCount: Int { self.count }
}

extension SmallDictionary: Equatable where Value: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.dictionary == rhs.dictionary }
}
