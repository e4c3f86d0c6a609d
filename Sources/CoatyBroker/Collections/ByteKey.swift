/// Bytes as a dictionary key, hashed in one pass over their memory: a client id or a topic filter.
///
/// `Array` feeds its elements to the hasher one at a time, a call per byte, which made hashing a large
/// part of looking up a Coaty agent's session (its client id is a 36-byte UUID) or one of its
/// subscriptions. One word, as the array: the broker keeps one per session and subscription.
struct ByteKey: Hashable, Sendable, ExpressibleByArrayLiteral {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The UTF-8 bytes of `string`: a client id, say.
    init(_ string: String) {
        self.init(Array(string.utf8))
    }

    init(arrayLiteral bytes: UInt8...) {
        self.init(bytes)
    }

    func hash(into hasher: inout Hasher) {
        self.bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (lhs: ByteKey, rhs: ByteKey) -> Bool {
        lhs.bytes == rhs.bytes
    }
}
