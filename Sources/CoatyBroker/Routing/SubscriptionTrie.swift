import CoatyCore

/// The identity of a broker session, stable for the session's lifetime (not the connection's).
struct SessionID: Hashable, Sendable, CustomStringConvertible {
    var rawValue: UInt64

    var description: String { "s\(self.rawValue)" }
}

/// Subscriptions indexed by topic-filter levels, matched against topic names by MQTT 3.1.1 §4.7 rules.
///
/// Levels are compared as UTF-8 bytes, never as `String`s: MQTT requires byte-for-byte comparison
/// [MQTT-4.7.3-4]. Empty levels are levels (`"a//b"` has three). A filter that starts with `+` or `#`
/// does not match a topic that starts with `$` [MQTT-4.7.2-1]. `"a/#"` also matches `"a"`.
/// When several filters of one session match a topic, ``match(topic:)`` reports the session once with
/// the maximum granted QoS [MQTT-3.3.5-1].
///
/// Nodes live in an array arena and are pruned when they become empty, so memory follows the number of
/// live subscriptions.
///
/// Matching descends one level per call, so the broker admits no topic or filter deeper than
/// ``maximumLevels`` (see ``admits(_:)``): MQTT allows 65,535 empty levels, and a subscription and a
/// publish of 50,000 `/` each overflowed the thread's stack here, as they did mosquitto's before its fix
/// for CVE-2019-11779. The limit also keeps a single filter from taking thousands of nodes.
struct SubscriptionTrie: Sendable {
    /// The most levels a topic or filter may have: 201, that is at most 200 `/`, mosquitto's limit
    /// (`TOPIC_HIERARCHY_LIMIT`). Coaty's topics have six or seven.
    static let maximumLevels = 201

    /// Whether `topic` (a topic name or filter) has at most ``maximumLevels`` levels. It runs for every
    /// PUBLISH: a topic shorter than ``maximumLevels`` bytes cannot hold that many `/`, and is not scanned.
    static func admits(_ topic: String) -> Bool {
        guard topic.utf8.count >= Self.maximumLevels else { return true }
        var separators = 0
        for byte in topic.utf8 where byte == UInt8(ascii: "/") { separators += 1 }
        return separators < Self.maximumLevels
    }

    /// A node. Its literal children are found by the hash of their level, so that matching looks a
    /// level of the topic up where it lies, without copying it into an array of its own (a Coaty topic
    /// has seven levels), and a node keeps its level as a plain array, one word. Children whose levels
    /// share a hash are chained through ``nextSameHash``. The `+` and `#` children (`-1`: none) sit
    /// beside the table, so matching a level costs one lookup, not three. Most nodes of Coaty's topics
    /// have one child (`coaty`, `3`, the namespace), which the table holds inline: the level is then
    /// compared with it, not hashed.
    private struct Node: Sendable {
        var parent: Int32
        var plusChild: Int32 = -1
        var hashChild: Int32 = -1
        /// The next child of `parent` whose level has the same hash, or `-1`.
        var nextSameHash: Int32 = -1
        var level: [UInt8]
        /// The first literal child for each hash of a level (see ``SubscriptionTrie/levelHash(_:)``).
        var children = SmallDictionary<Int, Int32>()
        var subscribers = SmallDictionary<SessionID, QualityOfService>()

        init(parent: Int, level: [UInt8]) {
            self.parent = Int32(parent)
            self.level = level
        }

        var isEmpty: Bool {
            self.children.isEmpty && self.plusChild < 0 && self.hashChild < 0 && self.subscribers.isEmpty
        }
    }

    private var nodes: [Node] = [Node(parent: -1, level: [])]
    private var free: [Int] = []

    /// The number of (session, filter) subscriptions stored.
    private(set) var count = 0

    /// Bits of a level's hash that are kept: all, but for tests that make every level's hash collide.
    private let levelHashMask: Int

    /// Creates an empty trie.
    init() {
        self.levelHashMask = ~0
    }

    /// An empty trie that keeps only the bits of `levelHashMask` of a level's hash: 0 gives every
    /// level the same hash, for tests of the chains of children whose hashes collide.
    init(levelHashMask: Int) {
        self.levelHashMask = levelHashMask
    }

    /// Adds or replaces the subscription of `session` to `filter` (given as its UTF-8 bytes).
    ///
    /// - Returns: `true` if the subscription is new, `false` if it replaced one with the same filter.
    @discardableResult
    mutating func insert(filter: [UInt8], session: SessionID, qos: QualityOfService) -> Bool {
        var index = 0
        Self.forEachLevel(of: filter) { level in
            if let child = self.child(of: index, level) {
                index = child
            } else {
                let child = self.nodes.store(Node(parent: index, level: Array(level)), reusing: &self.free)
                self.link(child, to: index)
                index = child
            }
            return true
        }
        let previous = self.nodes[index].subscribers.updateValue(qos, forKey: session)
        if previous == nil { self.count += 1 }
        return previous == nil
    }

    /// Removes the subscription of `session` to `filter`.
    ///
    /// - Returns: Whether such a subscription existed.
    @discardableResult
    mutating func remove(filter: [UInt8], session: SessionID) -> Bool {
        var index = 0
        let found = Self.forEachLevel(of: filter) { level in
            guard let child = self.child(of: index, level) else { return false }
            index = child
            return true
        }
        guard found, self.nodes[index].subscribers.removeValue(forKey: session) != nil else { return false }
        self.count -= 1
        self.prune(from: index)
        return true
    }

    /// Returns every session subscribed to a filter that matches `topic`, each once, with the maximum
    /// QoS granted among its matching subscriptions. Most topics match one session (a request's or an
    /// agent's own topic): a ``SmallDictionary`` holds it without allocating or hashing.
    func match(topic: some Collection<UInt8>) -> SmallDictionary<SessionID, QualityOfService> {
        var result = SmallDictionary<SessionID, QualityOfService>()
        let topic = Array(topic)
        let isDollar = topic.first == UInt8(ascii: "$")
        self.collect(node: 0, topic: topic, from: topic.startIndex, depth: 0, isDollar: isDollar, into: &result)
        return result
    }

    /// Whether the trie holds no subscriptions.
    var isEmpty: Bool { self.count == 0 }

    /// The number of nodes in use, for tests that check pruning.
    var nodeCount: Int { self.nodes.count - self.free.count }

    /// Adds the subscribers below `node` that match the levels of `topic` from the one at `start`
    /// (`nil`: past the last level), the level at `depth`. Nodes are read in place through `nodes`, not
    /// copied: a copy retains a node's level, children and subscribers.
    private func collect(
        node: Int,
        topic: [UInt8],
        from start: Int?,
        depth: Int,
        isDollar: Bool,
        into result: inout SmallDictionary<SessionID, QualityOfService>
    ) {
        // [MQTT-4.7.2-1]: wildcards in the first level never match a '$' topic.
        let wildcardsAllowed = !(depth == 0 && isDollar)
        if wildcardsAllowed, self.nodes[node].hashChild >= 0 {
            // '#' matches the parent level too ("a/#" matches "a"), so it applies at the end as well.
            Self.merge(self.nodes[Int(self.nodes[node].hashChild)].subscribers, into: &result)
        }
        guard let start else {
            Self.merge(self.nodes[node].subscribers, into: &result)
            return
        }
        let end = topic[start...].firstIndex(of: UInt8(ascii: "/")) ?? topic.endIndex
        let next = end < topic.endIndex ? end + 1 : nil
        if !self.nodes[node].children.isEmpty, let exact = self.literalChild(of: node, topic[start..<end]) {
            self.collect(node: exact, topic: topic, from: next, depth: depth + 1, isDollar: isDollar, into: &result)
        }
        if wildcardsAllowed, self.nodes[node].plusChild >= 0 {
            let plusChild = Int(self.nodes[node].plusChild)
            self.collect(node: plusChild, topic: topic, from: next, depth: depth + 1, isDollar: isDollar, into: &result)
        }
    }

    private static func merge(
        _ subscribers: SmallDictionary<SessionID, QualityOfService>,
        into result: inout SmallDictionary<SessionID, QualityOfService>
    ) {
        // Keys are unique within one node's subscribers.
        if result.isEmpty {
            result = subscribers
            return
        }
        for (session, qos) in subscribers {
            if let existing = result[session], existing >= qos { continue }
            result[session] = qos
        }
    }

    private mutating func prune(from start: Int) {
        var index = start
        while index != 0, self.nodes[index].isEmpty {
            let parent = Int(self.nodes[index].parent)
            self.unlink(index, from: parent)
            self.nodes[index] = Node(parent: -1, level: [])
            self.free.append(index)
            index = parent
        }
    }

    // MARK: - Children

    /// The hash of a level's bytes, in one pass (an array's own hash takes them a byte at a time).
    private func levelHash(_ level: ArraySlice<UInt8>) -> Int {
        var hasher = Hasher()
        level.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize() & self.levelHashMask
    }

    /// The wildcard a filter level is, or 0. ``RetainedTopicTree`` reads filters with it too.
    static func wildcard(_ level: ArraySlice<UInt8>) -> UInt8 {
        level.count == 1 && (level.first == UInt8(ascii: "+") || level.first == UInt8(ascii: "#")) ? level.first! : 0
    }

    /// The child of `node` for a filter level, literal or wildcard.
    private func child(of node: Int, _ level: ArraySlice<UInt8>) -> Int? {
        switch Self.wildcard(level) {
        case UInt8(ascii: "+"): self.nodes[node].plusChild < 0 ? nil : Int(self.nodes[node].plusChild)
        case UInt8(ascii: "#"): self.nodes[node].hashChild < 0 ? nil : Int(self.nodes[node].hashChild)
        default: self.literalChild(of: node, level)
        }
    }

    /// The child of `node` whose level is `level`, byte for byte. With one hash in the table, every
    /// literal child is on its chain: the level is compared, not hashed.
    private func literalChild(of node: Int, _ level: ArraySlice<UInt8>) -> Int? {
        var child: Int32
        if let only = self.nodes[node].children.onlyValue {
            child = only
        } else {
            guard let first = self.nodes[node].children[self.levelHash(level)] else { return nil }
            child = first
        }
        while child >= 0 {
            if self.nodes[Int(child)].level[...] == level { return Int(child) }
            child = self.nodes[Int(child)].nextSameHash
        }
        return nil
    }

    /// Makes `child`, whose level is set, a child of `node`.
    private mutating func link(_ child: Int, to node: Int) {
        let level = self.nodes[child].level[...]
        switch Self.wildcard(level) {
        case UInt8(ascii: "+"): self.nodes[node].plusChild = Int32(child)
        case UInt8(ascii: "#"): self.nodes[node].hashChild = Int32(child)
        default:
            let hash = self.levelHash(level)
            self.nodes[child].nextSameHash = self.nodes[node].children[hash] ?? -1
            self.nodes[node].children[hash] = Int32(child)
        }
    }

    /// Removes `child` from the children of `node`.
    private mutating func unlink(_ child: Int, from node: Int) {
        let level = self.nodes[child].level[...]
        switch Self.wildcard(level) {
        case UInt8(ascii: "+"): self.nodes[node].plusChild = -1
        case UInt8(ascii: "#"): self.nodes[node].hashChild = -1
        default:
            let hash = self.levelHash(level)
            guard let first = self.nodes[node].children[hash] else { return }
            let next = self.nodes[child].nextSameHash
            if Int(first) == child {
                self.nodes[node].children[hash] = next >= 0 ? next : nil
                return
            }
            var previous = Int(first)
            while self.nodes[previous].nextSameHash >= 0 {
                if Int(self.nodes[previous].nextSameHash) == child {
                    self.nodes[previous].nextSameHash = next
                    return
                }
                previous = Int(self.nodes[previous].nextSameHash)
            }
        }
    }

    /// Calls `body` with each level of a topic or filter, empty levels included, while it returns
    /// `true`; returns whether it always did.
    @discardableResult
    static func forEachLevel(of bytes: [UInt8], _ body: (ArraySlice<UInt8>) -> Bool) -> Bool {
        var start = bytes.startIndex
        while true {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
            guard body(bytes[start..<end]) else { return false }
            if end == bytes.endIndex { return true }
            start = end + 1
        }
    }
}
