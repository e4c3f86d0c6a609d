import CoatyCore
import Testing

@testable import CoatyBroker

struct SubscriptionTrieTests {
    private static let session = SessionID(rawValue: 1)

    /// mosquitto's pattern-matching corpus and the standard's examples (MQTT-NOTES §5.9), plus non-matches.
    @Test(arguments: [
        ("#", "test/topic", true),
        ("#", "/test/topic", true),
        ("#", "test////a//topic", true),
        ("foo/#", "foo", true),
        ("foo/#", "foo/", true),
        ("foo/#", "foo//bar///baz", true),
        ("foo/+/baz", "foo//baz", true),
        ("foo/+/baz/#", "foo/bar/baz", true),
        ("test/topic/+", "test/topic/", true),
        ("foo/+/baz//", "foo//baz//", true),
        ("+/+/+/+/+/+/+/+/+/+/test", "one/two/three/four/five/six/seven/eight/nine/ten/test", true),
        ("sport/#", "sport", true),
        ("+/+", "/finance", true),
        ("/+", "/finance", true),
        ("+", "/finance", false),
        ("a/b", "a/b/c", false),
        ("a/b/c", "a/b", false),
        ("a/+", "a", false),
        ("A/b", "a/b", false),
        ("#", "$SYS/x", false),
        ("+/x", "$SYS/x", false),
        ("$SYS/#", "$SYS/x", true),
        ("$SYS/+", "$SYS/x", true),
        ("a/#", "a/$x", true),
        ("e\u{301}", "é", false),
    ])
    func matching(filter: String, topic: String, matches: Bool) {
        var trie = SubscriptionTrie()
        trie.insert(filter: Array(filter.utf8), session: Self.session, qos: .atLeastOnce)
        #expect((trie.match(topic: Array(topic.utf8))[Self.session] != nil) == matches)
        // The trie agrees with CoatyCore's filter matcher.
        #expect((try? TopicFilter(filter).matches(topic)) == matches)
    }

    @Test func overlappingSubscriptionsDeliverOnceAtMaximumQoS() {
        var trie = SubscriptionTrie()
        let other = SessionID(rawValue: 2)
        trie.insert(filter: Array("a/+".utf8), session: Self.session, qos: .atMostOnce)
        trie.insert(filter: Array("a/#".utf8), session: Self.session, qos: .exactlyOnce)
        trie.insert(filter: Array("a/b".utf8), session: Self.session, qos: .atLeastOnce)
        trie.insert(filter: Array("#".utf8), session: other, qos: .atMostOnce)
        let matches = trie.match(topic: Array("a/b".utf8))
        #expect(matches.dictionary == [Self.session: .exactlyOnce, other: .atMostOnce])
    }

    @Test func resubscribingReplacesTheGrantedQoS() {
        var trie = SubscriptionTrie()
        do {
            let result = trie.insert(filter: Array("a".utf8), session: Self.session, qos: .exactlyOnce); #expect(result)
        }
        do {
            let result = trie.insert(filter: Array("a".utf8), session: Self.session, qos: .atMostOnce); #expect(!result)
        }
        #expect(trie.count == 1)
        #expect(trie.match(topic: Array("a".utf8)).dictionary == [Self.session: .atMostOnce])
    }

    @Test func removingPrunesEmptyNodes() {
        var trie = SubscriptionTrie()
        let baseline = trie.nodeCount
        trie.insert(filter: Array("a/b/c/d".utf8), session: Self.session, qos: .atMostOnce)
        trie.insert(filter: Array("a/b/x".utf8), session: Self.session, qos: .atMostOnce)
        do { let result = trie.remove(filter: Array("a/b/c/d".utf8), session: Self.session); #expect(result) }
        do { let result = trie.remove(filter: Array("a/b/c/d".utf8), session: Self.session); #expect(!result) }
        #expect(trie.match(topic: Array("a/b/x".utf8)).count == 1)
        do { let result = trie.remove(filter: Array("a/b/x".utf8), session: Self.session); #expect(result) }
        #expect(trie.isEmpty)
        #expect(trie.nodeCount == baseline)
    }

    /// Children are found by the hash of their level and chained when hashes collide: with every hash
    /// the same, levels are still told apart byte for byte, and a child is unlinked from the front,
    /// the middle or the end of its chain.
    @Test func levelsWhoseHashesCollideAreToldApart() {
        var trie = SubscriptionTrie(levelHashMask: 0)
        let levels = ["a", "b", "c", "d", "ab", ""]
        for (index, level) in levels.enumerated() {
            trie.insert(filter: Array("x/\(level)".utf8), session: SessionID(rawValue: UInt64(index)), qos: .atMostOnce)
        }
        trie.insert(filter: Array("x/+".utf8), session: SessionID(rawValue: 99), qos: .atMostOnce)
        func matched(_ level: String) -> Set<UInt64> {
            Set(trie.match(topic: Array("x/\(level)".utf8)).keys.map(\.rawValue))
        }
        for (index, level) in levels.enumerated() { #expect(matched(level) == [UInt64(index), 99]) }
        #expect(matched("e") == [99])
        // The chain holds them newest first: remove the newest, one in the middle and the oldest.
        for (index, level) in [(5, ""), (2, "c"), (0, "a")] {
            let removed = trie.remove(filter: Array("x/\(level)".utf8), session: SessionID(rawValue: UInt64(index)))
            #expect(removed)
            #expect(matched(level) == [99])
        }
        for (index, level) in [(1, "b"), (3, "d"), (4, "ab")] { #expect(matched(level) == [UInt64(index), 99]) }
        let baseline = SubscriptionTrie().nodeCount
        for (index, level) in [(1, "b"), (3, "d"), (4, "ab")] {
            trie.remove(filter: Array("x/\(level)".utf8), session: SessionID(rawValue: UInt64(index)))
        }
        trie.remove(filter: Array("x/+".utf8), session: SessionID(rawValue: 99))
        #expect(trie.isEmpty)
        #expect(trie.nodeCount == baseline)
    }

    @Test func emptyLevelsAreDistinct() {
        var trie = SubscriptionTrie()
        trie.insert(filter: Array("a//b".utf8), session: Self.session, qos: .atMostOnce)
        #expect(trie.match(topic: Array("a//b".utf8)).count == 1)
        #expect(trie.match(topic: Array("a/b".utf8)).isEmpty)
        #expect(trie.match(topic: Array("a///b".utf8)).isEmpty)
    }
}
