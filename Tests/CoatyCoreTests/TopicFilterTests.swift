import CoatyCore
import Foundation
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
        ("caf\u{e9}", "cafe\u{301}", false), ("a/+", "a", false), ("a/#", "ab", false), ("a/b/#", "a/b", true),
        ("a/b/#", "a/c", false), ("a/b/+", "a/b", false), ("a/b/+", "a/b/", true),
        ("coaty/3/-/RTN/+/c1", "coaty/3/-/RTN/src/c1", true), ("coaty/3/-/RTN/+/c1", "coaty/3/-/RTNX/src/c1", false),
        ("coaty/3/-/RTN/+/c1", "coaty/3/-/RTN", false),
    ])
    func matching(filter: String, topic: String, matches: Bool) throws {
        #expect(try TopicFilter(filter).matches(topic) == matches)
    }

    /// Every filter and topic built from a few levels agrees with matching level by level, as the
    /// standard describes it.
    @Test func matchingAgreesWithTheStandardsDefinition() throws {
        let topicLevels = ["a", "b", "", "$x"]
        let filterLevels = ["a", "b", "", "+", "#", "$x"]
        func combinations(_ levels: [String], upTo count: Int) -> [[String]] {
            (1...count).flatMap { length in
                (0..<Int(pow(Double(levels.count), Double(length)))).map { number in
                    var number = number
                    return (0..<length).map { _ in
                        defer { number /= levels.count }
                        return levels[number % levels.count]
                    }
                }
            }
        }
        func standard(_ filter: [String], _ topic: [String]) -> Bool {
            if topic[0].hasPrefix("$"), filter[0] == "+" || filter[0] == "#" { return false }
            for (index, level) in filter.enumerated() {
                if level == "#" { return true }
                guard index < topic.count else { return false }
                if level != "+", level != topic[index] { return false }
            }
            return filter.count == topic.count
        }
        let topics = combinations(topicLevels, upTo: 3).filter { $0 != [""] }
        for filter in combinations(filterLevels, upTo: 3) {
            guard let parsed = try? TopicFilter(filter.joined(separator: "/")) else {
                #expect(filter == [""] || filter.dropLast().contains("#"), "\(filter) was refused")
                continue
            }
            for topic in topics {
                let (text, expected) = (topic.joined(separator: "/"), standard(filter, topic))
                #expect(parsed.matches(text) == expected, "\(parsed) against \(text)")
            }
        }
    }

    @Test(arguments: ["", "a/#/b", "a#", "sport+", "a/b+/c", "a\u{0}b"])
    func invalidFiltersAreRejected(filter: String) {
        #expect(throws: TopicError.self) { try TopicFilter(filter) }
    }

    /// Each rule names itself, and U+0000 is reported before a misplaced wildcard wherever it is.
    @Test(arguments: [
        ("", "a topic must not be empty"),
        ("a/#/b", "'#' must be a whole level and the last one"), ("a#", "'#' must be a whole level and the last one"),
        ("#+", "'#' must be a whole level and the last one"), ("+#", "'#' must be a whole level and the last one"),
        ("sport+", "'+' must fill a whole level"), ("a/b+/c", "'+' must fill a whole level"),
        ("++", "'+' must fill a whole level"), ("a\u{0}b", "a topic must not contain U+0000"),
        ("a+/b\u{0}", "a topic must not contain U+0000"), ("#/\u{0}", "a topic must not contain U+0000"),
    ])
    func invalidFiltersSayWhy(filter: String, reason: String) {
        #expect(throws: TopicError(topic: filter, reason: reason)) { try TopicFilter(filter) }
        #expect(throws: TopicError(topic: filter, reason: reason)) { try TopicFilter.validate(filter) }
    }

    /// `validate` gives the initialiser's verdict without building a filter.
    @Test(arguments: ["a", "/", "//", "+", "#", "+/+", "a/+/#", "$SYS/#", "coaty/3/+/RTN/+/c1", "a b/\u{e9}"])
    func validFiltersPassValidation(filter: String) throws {
        _ = try TopicFilter(filter)
        try TopicFilter.validate(filter)
    }

    /// Filters are equal exactly when their UTF-8 bytes are, as MQTT compares them [MQTT-4.7.3-4]:
    /// canonically equivalent spellings are different filters that match different topics, so a set or
    /// dictionary of filters must keep both. Checked by the equality oracle of Fuzz/MQTT/TopicFuzz.swift.
    @Test(arguments: [("caf\u{e9}", "cafe\u{301}"), ("\u{212B}", "\u{C5}"), ("a\u{301}\u{316}", "a\u{316}\u{301}")])
    func canonicallyEquivalentFiltersAreDifferent(spelling: String, equivalent: String) throws {
        let first = try TopicFilter(spelling)
        let second = try TopicFilter(equivalent)
        #expect(first.matches(spelling) && !first.matches(equivalent))
        #expect(first != second)
        #expect(Set([first, second]).count == 2)
        #expect(first == (try TopicFilter(spelling)))
    }

    @Test func levelsAreClassified() throws {
        #expect(try TopicFilter("coaty/3/+/RTN/+/c0ffee").lastLiteralLevel == "c0ffee")
        #expect(try TopicFilter("a/+").lastLiteralLevel == nil)
        #expect(try TopicFilter("a//").lastLiteralLevel == "")
        #expect(try TopicFilter("a/#").hasWildcards)
        #expect(try !TopicFilter("a/b/c").hasWildcards)
    }

    @Test(arguments: [
        ("a/+", "a topic name must not contain '+' or '#'"), ("#", "a topic name must not contain '+' or '#'"),
        ("a\u{0}", "a topic must not contain U+0000"), ("+\u{0}", "a topic must not contain U+0000"),
    ])
    func invalidNamesSayWhy(topic: String, reason: String) {
        #expect(throws: TopicError(topic: topic, reason: reason)) { try TopicName.validate(topic) }
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
