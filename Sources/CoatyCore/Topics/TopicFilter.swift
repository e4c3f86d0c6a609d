/// A validated MQTT topic filter, with MQTT 3.1.1 wildcard matching (§4.7).
///
/// Matching compares UTF-8 bytes, never `String` equality: MQTT requires byte-for-byte comparison
/// without Unicode normalisation [MQTT-4.7.3-4]. Empty levels count (`"a//b"` has three levels), and
/// filters that start with a wildcard do not match topics that start with `$` [MQTT-4.7.2-1].
public struct TopicFilter: Sendable, Hashable, CustomStringConvertible {
    /// The filter as written.
    public let rawValue: String
    /// The filter's UTF-8 bytes, which ``Level/literal(_:)`` ranges point into.
    @usableFromInline let bytes: [UInt8]
    @usableFromInline let levels: [Level]
    /// The text's hash value, computed once: a filter is a key in several sets and dictionaries of
    /// the routing table, and each request's response filter is looked up about fifteen times.
    private let textHash: Int

    /// One level of a filter, classified once so matching compares no wildcard bytes.
    @usableFromInline enum Level: Sendable {
        /// A level to compare byte for byte: its range in ``bytes``.
        case literal(Range<Int>)
        /// `+`
        case anyLevel
        /// `#`, always the last level.
        case anyRemainingLevels

        @inlinable var isWildcard: Bool {
            if case .literal = self { return false }
            return true
        }
    }

    /// Validates a filter.
    ///
    /// - Throws: ``TopicError`` if the filter is empty, longer than 65,535 UTF-8 bytes, contains U+0000,
    ///   or uses `+`/`#` other than as a whole level (`#` only last).
    public init(_ rawValue: String) throws(TopicError) {
        try TopicRules.checkLength(rawValue)
        // One pass over the bytes classifies the levels and finds what is not allowed: every request
        // builds its response filter, so this runs once per request.
        var text = rawValue
        let bytes = text.withUTF8 { Array($0) }
        func failure(_ reason: String) -> TopicError {
            // The checks keep their order of precedence: U+0000 anywhere is reported first.
            bytes.contains(0)
                ? TopicError(topic: rawValue, reason: "a topic must not contain U+0000")
                : TopicError(topic: rawValue, reason: reason)
        }
        var levels: [Level] = []
        levels.reserveCapacity(8)
        var start = 0
        var index = 0
        var hasHash = false
        var hasPlus = false
        var hasNUL = false
        while true {
            let byte = index < bytes.count ? bytes[index] : UInt8(ascii: "/")
            if byte == UInt8(ascii: "/") {
                let isWhole = index - start == 1
                if hasHash {
                    guard isWhole, index == bytes.count else {
                        throw failure("'#' must be a whole level and the last one")
                    }
                    levels.append(.anyRemainingLevels)
                } else if hasPlus {
                    guard isWhole else { throw failure("'+' must fill a whole level") }
                    levels.append(.anyLevel)
                } else {
                    levels.append(.literal(start..<index))
                }
                if index == bytes.count { break }
                start = index + 1
                hasHash = false
                hasPlus = false
            } else if byte == UInt8(ascii: "#") {
                hasHash = true
            } else if byte == UInt8(ascii: "+") {
                hasPlus = true
            } else if byte == 0 {
                hasNUL = true
            }
            index += 1
        }
        if hasNUL { throw failure("") }
        self.rawValue = rawValue
        self.bytes = bytes
        self.levels = levels
        self.textHash = rawValue.hashValue
    }

    // Equality and hashing use the text alone: the levels are derived from it. Hashing feeds the
    // text's hash value, computed once at init, instead of every byte on every lookup.
    public static func == (lhs: TopicFilter, rhs: TopicFilter) -> Bool {
        lhs.textHash == rhs.textHash && lhs.rawValue == rhs.rawValue
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(self.textHash) }

    /// The text of the last level if it is not a wildcard, else `nil`.
    ///
    /// Such a filter matches only topics whose last level is this text, so routing tables can index
    /// filters by it instead of matching each against every topic.
    package var lastLiteralLevel: Substring? {
        guard case .literal(let range)? = self.levels.last else { return nil }
        let utf8 = self.rawValue.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
        let end = utf8.index(start, offsetBy: range.count)
        return self.rawValue[start..<end]
    }

    /// Whether the filter contains `+` or `#`.
    public var hasWildcards: Bool {
        self.levels.contains { $0.isWildcard }
    }

    /// Whether a topic name matches this filter.
    public func matches(_ topic: String) -> Bool {
        var utf8 = topic.utf8
        return utf8.withContiguousStorageIfAvailable { self.matches(bytes: $0) }
            ?? {
                utf8 = topic.utf8
                return self.matches(bytes: Array(utf8))
            }()
    }

    /// Whether a topic name, given as UTF-8 bytes, matches this filter.
    ///
    /// Inlinable, so it is specialised for the caller's collection type in other modules too.
    @inlinable
    public func matches<Bytes: Collection<UInt8>>(bytes topic: Bytes) -> Bool where Bytes.Index == Int {
        let slash = UInt8(ascii: "/")
        if let first = topic.first, first == UInt8(ascii: "$"), let firstLevel = self.levels.first,
            firstLevel.isWildcard
        {
            return false
        }
        var start = topic.startIndex
        var levelIndex = 0
        while true {
            // The current topic level runs from `start` to the next '/' or the end.
            var end = start
            while end < topic.endIndex, topic[end] != slash { end += 1 }
            guard levelIndex < self.levels.count else { return false }
            switch self.levels[levelIndex] {
            case .anyRemainingLevels:
                return true
            case .anyLevel:
                break
            case .literal(let range):
                guard range.count == end - start, self.bytes[range].elementsEqual(topic[start..<end]) else {
                    return false
                }
            }
            levelIndex += 1
            if end == topic.endIndex {
                // Topic exhausted: match if the filter is too, or continues with a lone "#" ("a/#" matches "a").
                guard levelIndex < self.levels.count else { return true }
                if levelIndex == self.levels.count - 1, case .anyRemainingLevels = self.levels[levelIndex] {
                    return true
                }
                return false
            }
            start = end + 1
        }
    }

    public var description: String { self.rawValue }
}
