/// A validated MQTT topic filter, with MQTT 3.1.1 wildcard matching (§4.7).
///
/// Matching compares UTF-8 bytes, never `String` equality: MQTT requires byte-for-byte comparison
/// without Unicode normalisation [MQTT-4.7.3-4]. Empty levels count (`"a//b"` has three levels), and
/// filters that start with a wildcard do not match topics that start with `$` [MQTT-4.7.2-1].
public struct TopicFilter: Sendable, Hashable, CustomStringConvertible {
    /// Everything about the filter, computed once and shared by its copies: a filter is copied into
    /// routing entries, sets and dictionaries, and a copy then costs one reference count instead of
    /// three.
    @usableFromInline let storage: Storage

    /// The filter as written.
    public var rawValue: String { self.storage.rawValue }

    @usableFromInline final class Storage: Sendable {
        let rawValue: String
        /// The filter's UTF-8 bytes, which ``Level/literal(_:)`` ranges point into.
        @usableFromInline let bytes: [UInt8]
        @usableFromInline let levels: [Level]
        /// When the filter has a wildcard: the number of literal levels before the first one, and
        /// the length in bytes of those levels with their slashes (`"coaty/3/-/RTN/"` for
        /// `"coaty/3/-/RTN/+/c1"`). A topic that does not start with these bytes cannot match, which
        /// ``TopicFilter/matches(bytes:)`` finds with one comparison. `0` and `0` without a wildcard.
        @usableFromInline let literalPrefixLevels: Int
        @usableFromInline let literalPrefixCount: Int
        /// The hash value of the UTF-8 bytes, computed once: a filter is a key in several sets and dictionaries
        /// of the routing table, and each request's response filter is looked up about ten times.
        let textHash: Int

        init(rawValue: String, bytes: [UInt8], levels: [Level]) {
            self.rawValue = rawValue
            self.bytes = bytes
            self.levels = levels
            let prefixLevels = levels.firstIndex { $0.isWildcard } ?? 0
            self.literalPrefixLevels = prefixLevels
            if prefixLevels > 0, case .literal(let range) = levels[prefixLevels - 1] {
                self.literalPrefixCount = range.upperBound + 1
            } else {
                self.literalPrefixCount = 0
            }
            // In one pass over the memory: `Array`'s own hash feeds the hasher a byte at a time.
            var hasher = Hasher()
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
            self.textHash = hasher.finalize()
        }
    }

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
        var levels: [Level] = []
        levels.reserveCapacity(8)
        try bytes.withUnsafeBufferPointer { buffer throws(TopicError) in
            try Self.scan(buffer, rawValue: rawValue) { levels.append($0) }
        }
        self.storage = Storage(rawValue: rawValue, bytes: bytes, levels: levels)
    }

    /// Checks `rawValue` against the rules ``init(_:)`` checks, without building a filter: for codecs
    /// that only pass the text on (a SUBSCRIBE or UNSUBSCRIBE being encoded or decoded).
    ///
    /// - Throws: ``TopicError``, as ``init(_:)``.
    public static func validate(_ rawValue: String) throws(TopicError) {
        try TopicRules.checkLength(rawValue)
        var text = rawValue
        var failure: TopicError?
        text.withUTF8 { buffer in
            do throws(TopicError) {
                try Self.scan(buffer, rawValue: rawValue) { _ in }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Walks the levels of a filter's UTF-8 `bytes` (not empty), handing each to `level`, and throws
    /// at the first rule broken; U+0000 anywhere is reported before a misplaced wildcard.
    @inline(__always)
    private static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>,
        rawValue: String,
        _ level: (Level) -> Void
    ) throws(TopicError) {
        func failure(_ reason: String) -> TopicError {
            bytes.contains(0) ? TopicRules.containsNUL(rawValue) : TopicError(topic: rawValue, reason: reason)
        }
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
                    level(.anyRemainingLevels)
                } else if hasPlus {
                    guard isWhole else { throw failure("'+' must fill a whole level") }
                    level(.anyLevel)
                } else {
                    level(.literal(start..<index))
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
        if hasNUL { throw TopicRules.containsNUL(rawValue) }
    }

    // Equality and hashing use the UTF-8 bytes alone: the levels are derived from them. Not the
    // `String`, whose == and hash treat canonically equivalent spellings ("caf\u{E9}", "cafe\u{301}") as
    // equal, while MQTT compares byte for byte [MQTT-4.7.3-4] and such filters match different topics.
    // Hashing feeds the bytes' hash value, computed once at init, instead of every byte on every lookup.
    public static func == (lhs: TopicFilter, rhs: TopicFilter) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.storage.textHash == rhs.storage.textHash && lhs.storage.bytes == rhs.storage.bytes)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(self.storage.textHash) }

    /// The text of the last level if it is not a wildcard, else `nil`.
    ///
    /// Such a filter matches only topics whose last level is this text, so routing tables can index
    /// filters by it instead of matching each against every topic.
    package var lastLiteralLevel: Substring? {
        guard case .literal(let range)? = self.storage.levels.last else { return nil }
        let utf8 = self.rawValue.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
        let end = utf8.index(start, offsetBy: range.count)
        return self.rawValue[start..<end]
    }

    /// Whether the filter contains `+` or `#`.
    public var hasWildcards: Bool {
        self.storage.literalPrefixCount > 0 || self.storage.levels.first?.isWildcard == true
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
        let storage = self.storage
        let levels = storage.levels
        var start = topic.startIndex
        var levelIndex = 0
        let prefixCount = storage.literalPrefixCount
        if prefixCount > 0 {
            // Compare the literal levels before the first wildcard in one go. A topic one byte shorter
            // than them can still match a filter that ends in "/#" right there ("a/#" matches "a").
            let topicCount = topic.count
            guard topicCount >= prefixCount - 1 else { return false }
            let compared = Swift.min(prefixCount, topicCount)
            var index = 0
            while index < compared {
                guard storage.bytes[index] == topic[start + index] else { return false }
                index += 1
            }
            if topicCount < prefixCount {
                guard storage.literalPrefixLevels == levels.count - 1, case .anyRemainingLevels = levels.last else {
                    return false
                }
                return true
            }
            start += prefixCount
            levelIndex = storage.literalPrefixLevels
        } else if let first = topic.first, first == UInt8(ascii: "$"), let firstLevel = levels.first,
            firstLevel.isWildcard
        {
            return false
        }
        while true {
            // The current topic level runs from `start` to the next '/' or the end.
            var end = start
            while end < topic.endIndex, topic[end] != slash { end += 1 }
            guard levelIndex < levels.count else { return false }
            switch levels[levelIndex] {
            case .anyRemainingLevels:
                return true
            case .anyLevel:
                break
            case .literal(let range):
                guard range.count == end - start, storage.bytes[range].elementsEqual(topic[start..<end]) else {
                    return false
                }
            }
            levelIndex += 1
            if end == topic.endIndex {
                // Topic exhausted: match if the filter is too, or continues with a lone "#" ("a/#" matches "a").
                guard levelIndex < levels.count else { return true }
                if levelIndex == levels.count - 1, case .anyRemainingLevels = levels[levelIndex] {
                    return true
                }
                return false
            }
            start = end + 1
        }
    }

    public var description: String { self.rawValue }
}
