import CoatyCore
import Testing

@testable import CoatyBroker

/// The retained topics' level tree finds exactly what a scan of every topic with
/// `TopicFilter.matches(bytes:)` finds, and frees its nodes as topics go.
struct RetainedTopicTreeTests {
    /// Topics that exercise the matching rules: empty levels, `$` topics, a topic that is a prefix of
    /// others, two spellings of `café`, Coaty response topics.
    static let topics = [
        "a", "a/b", "a/b/c", "a/c", "a//c", "/a", "/", "//", "b", "$SYS/x", "$SYS/x/y", "$x", "café/1", "cafe\u{301}/1",
        "coaty/3/-/RTN/agent1/c1", "coaty/3/-/RTN/agent2/c2", "coaty/3/ns/RTN/agent1/c1", "coaty/3/-/ADV:Thing/a",
    ]

    static let filters = [
        "#", "+", "a", "a/#", "a/+", "a/+/c", "+/+", "+/b", "/#", "+/a", "//", "+//c", "$SYS/#", "$SYS/+", "+/x",
        "$x", "café/+", "cafe\u{301}/#", "coaty/3/+/RTN/+/c1", "coaty/3/-/RTN/+/c2", "coaty/#", "coaty/3/-/+/+/+",
        "a/b/c/#", "x/#",
    ]

    /// Topics as bytes: `Set<String>` would take the two spellings of `café` for one.
    private static func scan(_ topics: [[UInt8]], _ filter: TopicFilter) -> [[UInt8]] {
        topics.filter { filter.matches(bytes: $0) }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    private static func found(_ tree: RetainedTopicTree, _ filter: String) -> [[UInt8]] {
        tree.topics(matching: Array(filter.utf8)).sorted { $0.lexicographicallyPrecedes($1) }
    }

    private static let topicBytes = topics.map { Array($0.utf8) }

    @Test(arguments: filters)
    func findsWhatAScanFinds(filter: String) throws {
        var tree = RetainedTopicTree()
        for topic in Self.topics { tree.insert(Array(topic.utf8)) }
        let parsed = try TopicFilter(filter)
        let found = Self.found(tree, filter)
        #expect(found == Self.scan(Self.topicBytes, parsed))
        #expect(!found.isEmpty || ["x/#", "+/x"].contains(filter))
    }

    /// Removing topics in any order leaves the others findable and, once all are gone, only the root.
    @Test func removalsKeepTheRestAndPrune() throws {
        var tree = RetainedTopicTree()
        for topic in Self.topics { tree.insert(Array(topic.utf8)) }
        var left = Self.topicBytes
        // Every fifth topic, round and round: 5 and the count are coprime, so each goes once.
        let order = Self.topicBytes.indices.map { $0 * 5 % Self.topicBytes.count }
        for index in order {
            let topic = Self.topicBytes[index]
            tree.remove(topic)
            left.removeAll { $0 == topic }
            for filter in ["#", "a/#", "+/+", "$SYS/#", "coaty/3/+/RTN/+/c1", "café/+"] {
                #expect(Self.found(tree, filter) == Self.scan(left, try TopicFilter(filter)), "after \(index)")
            }
        }
        #expect(tree.nodeCount == 1)
        // Removing what is not there changes nothing.
        tree.remove(Array("a/b".utf8))
        #expect(tree.nodeCount == 1)
    }

    /// An inner node that holds a topic stays when the topics below it go, and the other way round.
    @Test func aTopicAndTopicsBelowItAreIndependent() {
        var tree = RetainedTopicTree()
        tree.insert(Array("a".utf8))
        tree.insert(Array("a/b".utf8))
        tree.remove(Array("a/b".utf8))
        #expect(Self.found(tree, "a/#") == [Array("a".utf8)])
        #expect(tree.nodeCount == 2)
        tree.insert(Array("a/b".utf8))
        tree.remove(Array("a".utf8))
        #expect(Self.found(tree, "a/#") == [Array("a/b".utf8)])
        #expect(Self.found(tree, "a") == [])
    }
}
