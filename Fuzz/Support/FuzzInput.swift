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

/// One step of SplitMix64, a small deterministic generator: for chunk sizes and the like, derived from
/// an input byte so that a run can be replayed.
func nextRandom(_ state: inout UInt64) -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
}
