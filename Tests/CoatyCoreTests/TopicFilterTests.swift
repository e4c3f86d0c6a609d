import CoatyCore
import Testing

struct TopicFilterTests {
    @Test(arguments: [
        ("#", "test/topic", true), ("#", "/test/topic", true), ("#", "test////a//topic", true),
        ("foo/#", "foo", true), ("foo/#", "foo/", true), ("foo/#", "foo//bar///baz", true),
        ("foo/+/baz", "foo//baz", true), ("foo/+/baz/#", "foo/bar/baz", true),
        ("test/topic/+", "test/topic/", true), ("foo/+/baz//", "foo//baz//", true),
        ("+/+/+/+/+/+/+/+/+/+/test", "one/two/three/four/five/six/seven/eight/nine/ten/test", true),
        ("sport/#", "sport", true), ("+/+", "/finance", true), ("/+", "/finance", true),
        ("+", "/finance", false), ("a/b", "a/b/c", false), ("a/b/c", "a/b", false),
        ("#", "$SYS/x", false), ("+/x", "$SYS/x", false), ("$SYS/#", "$SYS/x", true),
        ("coaty/3/+/ADV::com.example.Sensor/+", "coaty/3/-/ADV::com.example.Sensor/1b2c", true),
        ("coaty/3/+/DSC/+/+", "coaty/3/-/DSC/1b2c", false), ("a/#", "a", true),
        ("caf\u{e9}", "cafe\u{301}", false),
    ])
    func matching(filter: String, topic: String, matches: Bool) throws {
        #expect(try TopicFilter(filter).matches(topic) == matches)
    }

    @Test(arguments: ["", "a/#/b", "a#", "sport+", "a/b+/c", "a\u{0}b"])
    func invalidFiltersAreRejected(filter: String) {
        #expect(throws: TopicError.self) { try TopicFilter(filter) }
    }

    @Test(arguments: ["", "a/+", "a/#", "a\u{0}"])
    func invalidNamesAreRejected(topic: String) {
        #expect(!TopicName.isValid(topic))
    }

    @Test func longestTopicIsAcceptedAndOneMoreByteRejected() {
        #expect(TopicName.isValid(String(repeating: "a", count: 65_535)))
        #expect(!TopicName.isValid(String(repeating: "a", count: 65_536)))
    }
}
