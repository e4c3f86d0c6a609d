/// The topic names of the retained messages, indexed by level, so that a subscription with wildcards
/// visits only the branches its filter can match instead of every stored topic.
///
/// Every Coaty request subscribes a response filter with wildcards (`coaty/3/-/RTN/+/<id>`); with a
/// scan, each request cost one comparison per retained message, and a broker holding the last value
/// of thousands of topics spent most of a request on it. Here the filter's literal levels are looked
/// up, a `+` visits the children of one node, and a `#` the subtree below one.
///
/// Levels are compared as UTF-8 bytes [MQTT-4.7.3-4]; empty levels are levels. A `+` or `#` in the
/// first level of a filter does not match a topic that starts with `$` [MQTT-4.7.2-1], and `"a/#"`
/// also matches `"a"`. Nodes live in an array arena and are pruned when they hold nothing, so
/// memory follows the stored topics.
struct RetainedTopicTree: Sendable {
    private struct Node: Sendable {
        var parent: Int
        var level: ByteKey
        var children: [ByteKey: Int] = [:]
        /// Whether a retained message is stored for the topic that ends at this node.
        var holdsTopic = false

        var isEmpty: Bool { self.children.isEmpty && !self.holdsTopic }
    }

    private var nodes: [Node] = [Node(parent: -1, level: [])]
    private var free: [Int] = []

    /// The number of nodes in use, the root included, for tests that check pruning.
    var nodeCount: Int { self.nodes.count - self.free.count }

    /// Records that a message is stored for `topic` (a topic name's UTF-8 bytes).
    mutating func insert(_ topic: [UInt8]) {
        var index = 0
        SubscriptionTrie.forEachLevel(of: topic) { level in
            let key = ByteKey(Array(level))
            if let child = self.nodes[index].children[key] {
                index = child
            } else {
                let child = self.nodes.store(Node(parent: index, level: key), reusing: &self.free)
                self.nodes[index].children[key] = child
                index = child
            }
            return true
        }
        self.nodes[index].holdsTopic = true
    }

    /// Records that no message is stored for `topic` any more.
    mutating func remove(_ topic: [UInt8]) {
        var index = 0
        let found = SubscriptionTrie.forEachLevel(of: topic) { level in
            guard let child = self.nodes[index].children[ByteKey(Array(level))] else { return false }
            index = child
            return true
        }
        guard found else { return }
        self.nodes[index].holdsTopic = false
        while index != 0, self.nodes[index].isEmpty {
            let parent = self.nodes[index].parent
            self.nodes[parent].children[self.nodes[index].level] = nil
            self.nodes[index] = Node(parent: -1, level: [])
            self.free.append(index)
            index = parent
        }
    }

    /// The stored topics that `filter` (a valid topic filter's UTF-8 bytes) matches, in no order.
    func topics(matching filter: [UInt8]) -> [[UInt8]] {
        var levels: [ArraySlice<UInt8>] = []
        SubscriptionTrie.forEachLevel(of: filter) { level in
            levels.append(level)
            return true
        }
        var result: [[UInt8]] = []
        self.collect(node: 0, filter: levels, at: 0, path: [], into: &result)
        return result
    }

    /// Adds the stored topics below `node`, whose topic is `path`, that match the filter's levels
    /// from `depth` on.
    private func collect(
        node: Int,
        filter: [ArraySlice<UInt8>],
        at depth: Int,
        path: [UInt8],
        into result: inout [[UInt8]]
    ) {
        guard depth < filter.count else {
            if self.nodes[node].holdsTopic { result.append(path) }
            return
        }
        let level = filter[depth]
        let wildcard = SubscriptionTrie.wildcard(level)
        switch wildcard {
        case UInt8(ascii: "+"), UInt8(ascii: "#"):
            // "a/#" matches "a" too.
            if wildcard == UInt8(ascii: "#"), depth > 0, self.nodes[node].holdsTopic { result.append(path) }
            for (key, child) in self.nodes[node].children {
                // [MQTT-4.7.2-1]: a wildcard in the first level does not match a '$' topic.
                if depth == 0, key.bytes.first == UInt8(ascii: "$") { continue }
                if wildcard == UInt8(ascii: "#") {
                    self.collectAll(node: child, path: self.path(path, child), into: &result)
                } else {
                    self.collect(
                        node: child,
                        filter: filter,
                        at: depth + 1,
                        path: self.path(path, child),
                        into: &result
                    )
                }
            }
        default:
            guard let child = self.nodes[node].children[ByteKey(Array(level))] else { return }
            self.collect(node: child, filter: filter, at: depth + 1, path: self.path(path, child), into: &result)
        }
    }

    /// Adds every stored topic at or below `node`, whose topic is `path`.
    private func collectAll(node: Int, path: [UInt8], into result: inout [[UInt8]]) {
        if self.nodes[node].holdsTopic { result.append(path) }
        for child in self.nodes[node].children.values {
            self.collectAll(node: child, path: self.path(path, child), into: &result)
        }
    }

    /// The topic of `child`, given its parent's.
    private func path(_ parent: [UInt8], _ child: Int) -> [UInt8] {
        let level = self.nodes[child].level.bytes
        return self.nodes[child].parent == 0 ? level : parent + [UInt8(ascii: "/")] + level
    }
}
