// Shared by every harness: Scripts/fuzz.sh compiles Fuzz/Support/*.swift into each of them (and
// Fuzz/<area>/Support/*.swift into the harnesses of that area).

/// Traps with `message` unless `condition` holds: how a harness reports a failed check to libFuzzer.
func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

/// A fuzz input read as a program, byte by byte: 0 after its end, so every input is a whole program.
struct FuzzInput {
    var bytes: [UInt8]
    var index = 0

    init(_ data: UnsafeRawPointer, count: Int) {
        self.bytes = Array(UnsafeRawBufferPointer(start: data, count: count))
    }

    var isAtEnd: Bool { self.index >= self.bytes.count }

    /// The next byte, or 0 after the end.
    mutating func next() -> UInt8 {
        defer { self.index += 1 }
        return self.index < self.bytes.count ? self.bytes[self.index] : 0
    }

    /// Up to `count` next bytes (fewer at the end).
    mutating func take(_ count: Int) -> [UInt8] {
        let end = min(self.bytes.count, self.index + count)
        defer { self.index = max(self.index, end) }
        return self.index < end ? Array(self.bytes[self.index..<end]) : []
    }

    /// One of `values`, chosen by the next byte.
    mutating func pick<T>(_ values: [T]) -> T { values[Int(self.next()) % values.count] }
}
