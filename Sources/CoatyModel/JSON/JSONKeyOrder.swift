/// The order in which deterministic output writes object keys: by their UTF-8 bytes, which is Unicode
/// code point order. Unlike `String`'s `<`, it tells apart keys that are only canonically equivalent
/// (JSON and JavaScript keep those apart), so it is a total order on keys and the output of equal values
/// is the same bytes in every process.
enum JSONKeyOrder {
    static func precedes(_ a: String, _ b: String) -> Bool {
        // Native strings hand out their bytes without a copy; others are copied once.
        let answer = a.utf8.withContiguousStorageIfAvailable { a in
            b.utf8.withContiguousStorageIfAvailable { b in Self.precedes(a, b) }
        }
        if let answer = answer ?? nil { return answer }
        return Self.precedes(Array(a.utf8)[...], Array(b.utf8)[...])
    }

    /// The indices of `keys` in key order.
    static func sortedIndices(of keys: [String]) -> [Int] {
        keys.indices.sorted { Self.precedes(keys[$0], keys[$1]) }
    }

    private static func precedes(
        _ a: some RandomAccessCollection<UInt8>,
        _ b: some RandomAccessCollection<UInt8>
    ) -> Bool {
        for (x, y) in zip(a, b) where x != y { return x < y }
        return a.count < b.count
    }
}
