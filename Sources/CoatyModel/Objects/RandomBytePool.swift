import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Random bits for ``ObjectID/random()``, drawn from the operating system's generator 256 bytes at a
/// time.
///
/// Every request makes a correlation id, and `SystemRandomNumberGenerator` asks the kernel for each 8
/// bytes (two `getrandom` calls per id, about half a microsecond). The pool asks once per 16 ids. The
/// bits are the same kernel bits, each handed out once; a process that forks without exec would share
/// the unused rest of the pool with its child, which nothing in this framework does.
struct RandomBytePool: ~Copyable {
    private static let capacity = 256

    private var bytes = [UInt8](repeating: 0, count: Self.capacity)
    private var next = Self.capacity

    /// The process-wide pool.
    static let shared = Mutex(RandomBytePool())

    /// Two random 64-bit words.
    mutating func nextPair() -> (UInt64, UInt64) {
        if self.next + 16 > Self.capacity { self.refill() }
        let pair = self.bytes.withUnsafeBytes { raw in
            (
                raw.loadUnaligned(fromByteOffset: self.next, as: UInt64.self),
                raw.loadUnaligned(fromByteOffset: self.next + 8, as: UInt64.self)
            )
        }
        self.next += 16
        return pair
    }

    private mutating func refill() {
        self.bytes.withUnsafeMutableBytes { raw in
            // getentropy hands out at most 256 bytes per call, from the same source as getrandom.
            if getentropy(raw.baseAddress!, raw.count) != 0 {
                // It fails only without kernel support (before Linux 3.17); fall back.
                var generator = SystemRandomNumberGenerator()
                for index in raw.indices { raw[index] = UInt8(truncatingIfNeeded: generator.next()) }
            }
        }
        self.next = 0
    }
}
