/// The order in which deterministic output writes object keys: by their UTF-8 bytes, which is Unicode
/// code point order. Unlike `String`'s `<`, it tells apart keys that are only canonically equivalent
/// (JSON and JavaScript keep those apart), so it is a total order on keys and the output of equal values
/// is the same bytes in every process.
enum JSONKeyOrder {
    static func precedes(_ a: String, _ b: String) -> Bool {
        var a = a
        var b = b
        return a.withUTF8 { a in
            b.withUTF8 { b in
                let count = min(a.count, b.count)
                for index in 0..<count where a[index] != b[index] { return a[index] < b[index] }
                return a.count < b.count
            }
        }
    }
}
