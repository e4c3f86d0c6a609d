/// Bytes as a dictionary key, hashed in one pass over their memory.
///
/// `Array` and `ArraySlice` feed their elements to the hasher one at a time: a call per byte, which
/// made hashing most of the cost of looking up a level of a Coaty topic (a 36-byte correlation id,
/// say) in the broker's subscription trie. Equal bytes are equal keys, wherever the slices start.
struct ByteKey: Hashable, Sendable, ExpressibleByArrayLiteral {
    var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    init(_ bytes: [UInt8]) {
        self.bytes = bytes[...]
    }

    init(arrayLiteral bytes: UInt8...) {
        self.init(bytes)
    }

    /// The bytes as an array of their own.
    var array: [UInt8] { Array(self.bytes) }

    func hash(into hasher: inout Hasher) {
        self.bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (lhs: ByteKey, rhs: ByteKey) -> Bool {
        lhs.bytes == rhs.bytes
    }
}
