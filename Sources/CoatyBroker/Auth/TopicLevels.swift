/// A topic name or filter split into its levels, compared byte for byte, with the relations the
/// access control list needs: matching, overlap and cover, all under MQTT 3.1.1 §4.7's rules (a
/// filter starting with `+` or `#` matches no topic starting with `$`; `a/#` also matches `a`).
struct TopicLevels: Sendable, Hashable {
    private static let plus: [UInt8] = [UInt8(ascii: "+")]
    private static let hash: [UInt8] = [UInt8(ascii: "#")]

    /// The levels; empty levels count (`"a//b"` has three).
    var levels: [[UInt8]]

    init(_ text: String) {
        self.init(bytes: text.utf8)
    }

    init(bytes: some Collection<UInt8>) {
        self.levels = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { Array($0) }
    }

    private func isWildcard(_ index: Int) -> Bool {
        self.levels[index] == Self.plus || self.levels[index] == Self.hash
    }

    /// Whether the first level is a literal starting with `$`, so that only topics starting with `$`
    /// can match (a topic name always has at least one level).
    private var startsWithDollarLiteral: Bool {
        self.levels[0].first == UInt8(ascii: "$") && !self.isWildcard(0)
    }

    /// Whether this filter matches `topic`, a topic name without wildcards.
    func matches(topic: TopicLevels) -> Bool {
        if topic.startsWithDollarLiteral, self.isWildcard(0) { return false }
        var index = 0
        while index < self.levels.count {
            if self.levels[index] == Self.hash { return true }
            guard index < topic.levels.count else { return false }
            if self.levels[index] != Self.plus, self.levels[index] != topic.levels[index] { return false }
            index += 1
        }
        return index == topic.levels.count
    }

    /// Whether some topic name matches both this filter and `other`.
    func overlaps(_ other: TopicLevels) -> Bool {
        if (self.isWildcard(0) && other.startsWithDollarLiteral)
            || (other.isWildcard(0) && self.startsWithDollarLiteral)
        {
            return false
        }
        var index = 0
        while true {
            let selfEnded = index == self.levels.count
            let otherEnded = index == other.levels.count
            if !selfEnded, self.levels[index] == Self.hash { return true }
            if !otherEnded, other.levels[index] == Self.hash { return true }
            if selfEnded || otherEnded { return selfEnded && otherEnded }
            let (mine, theirs) = (self.levels[index], other.levels[index])
            guard mine == Self.plus || theirs == Self.plus || mine == theirs else { return false }
            index += 1
        }
    }

    /// Whether every topic name that `filter` matches is matched by this filter too.
    func covers(_ filter: TopicLevels) -> Bool {
        if filter.startsWithDollarLiteral, self.isWildcard(0) { return false }
        var index = 0
        while true {
            if index < self.levels.count, self.levels[index] == Self.hash { return true }
            if index == filter.levels.count { return index == self.levels.count }
            if index == self.levels.count { return false }
            let (mine, theirs) = (self.levels[index], filter.levels[index])
            if theirs == Self.hash { return false }
            if theirs == Self.plus {
                guard mine == Self.plus else { return false }
            } else {
                guard mine == Self.plus || mine == theirs else { return false }
            }
            index += 1
        }
    }
}
