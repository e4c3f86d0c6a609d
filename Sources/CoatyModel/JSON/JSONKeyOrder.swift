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

    /// Up to this many members are sorted in place by ``insertionSort(count:key:swap:)``; more through
    /// ``sortedIndices(of:)``, where insertion's quadratic number of moves would cost more.
    static let inPlaceLimit = 16

    /// The members of a dictionary in key order.
    static func sorted<Value>(_ dictionary: [String: Value]) -> [(key: String, value: Value)] {
        var members = Array(dictionary)
        guard members.count > Self.inPlaceLimit else {
            members.withUnsafeMutableBufferPointer { members in
                Self.insertionSort(count: members.count, key: { members[$0].key }, swap: { members.swapAt($0, $1) })
            }
            return members
        }
        return Self.sortedIndices(of: members.map(\.key)).map { members[$0] }
    }

    /// Sorts `count` members, named by `key`, by insertion, moving them with `swap`: for a few members
    /// (the usual case), which this sorts in place without copying them.
    @inline(__always)
    static func insertionSort(count: Int, key: (Int) -> String, swap: (Int, Int) -> Void) {
        guard count > 1 else { return }
        for end in 1..<count {
            var index = end
            while index > 0, Self.precedes(key(index), key(index - 1)) {
                swap(index, index - 1)
                index -= 1
            }
        }
    }

    private static func precedes(
        _ a: some RandomAccessCollection<UInt8>,
        _ b: some RandomAccessCollection<UInt8>
    ) -> Bool {
        for (x, y) in zip(a, b) where x != y { return x < y }
        return a.count < b.count
    }
}
