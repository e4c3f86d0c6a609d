/// Unicode's stream-safe text format (UAX #15 §13): at most 30 non-starters (combining marks) in a row.
///
/// Swift normalises a string to hash or compare it, and normalising sorts each run of non-starters by
/// combining class, in time quadratic in the run's length: hashing one string of 80,000 alternating
/// marks (320 KB) took over a minute. Text received from other agents (JSON strings, topic levels) is
/// therefore checked before it can become a dictionary key or be compared. No real text needs more.
package enum StreamSafeText {
    /// The most non-starters accepted in a row.
    @inlinable package static var maximumNonStarters: Int { 30 }

    /// The shortest UTF-8 text that can break the limit: every non-starter takes at least two bytes.
    @inlinable package static var shortestViolation: Int { 2 * (maximumNonStarters + 1) }

    /// Whether `text` has at most ``maximumNonStarters`` non-starters in a row.
    ///
    /// Inlinable, so that text shorter than ``shortestViolation`` (a UUID topic level, most JSON strings)
    /// costs its callers one comparison and no call: topic parsing runs for every inbound message.
    @inlinable package static func isStreamSafe(_ text: String) -> Bool {
        text.utf8.count < Self.shortestViolation || Self.hasNoLongRunOfNonStarters(text)
    }

    /// Scans `text` for a run of more than ``maximumNonStarters`` non-starters. Every non-starter is at
    /// U+0300 or above, so most scalars are passed over without a property lookup.
    @usableFromInline package static func hasNoLongRunOfNonStarters(_ text: String) -> Bool {
        var run = 0
        for scalar in text.unicodeScalars {
            guard scalar.value >= 0x300, scalar.properties.canonicalCombiningClass != .notReordered else {
                run = 0
                continue
            }
            run += 1
            if run > Self.maximumNonStarters { return false }
        }
        return true
    }
}
