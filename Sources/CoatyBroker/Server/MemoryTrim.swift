import CoatySockets

/// When to hand the memory of closed connections back to the operating system.
///
/// glibc's allocator keeps freed memory in its arenas: after a burst of connections closes, the
/// broker's resident size stays at the burst's peak (17 MiB more after 2,000 connections) although the
/// memory is free. The broker's sweeper reports the number of open connections every 250 ms; once it
/// has fallen by at least ``minimumDrop`` and to at most half of its peak since the last trim, the
/// sweeper calls `malloc_trim(0)`, which returns the free pages. A steady load never trims.
package struct MemoryTrim: Sendable, Equatable {
    /// The fewest closed connections worth a trim.
    package static let minimumDrop = 256

    /// The most connections open at once since the last trim.
    package private(set) var peak = 0

    package init() {}

    /// Records the number of open connections; returns whether to trim now.
    package mutating func observe(openConnections open: Int) -> Bool {
        self.peak = max(self.peak, open)
        guard self.peak - open >= Self.minimumDrop, open * 2 <= self.peak else { return false }
        self.peak = open
        return true
    }

    /// glibc's `malloc_trim`, looked up at run time; `nil` with another C library.
    private static let mallocTrim = RuntimeSymbol.lookUp("malloc_trim", as: (@convention(c) (Int) -> Int32).self)

    /// Returns the allocator's free memory to the operating system, where the C library can.
    package static func trim() {
        _ = Self.mallocTrim?(0)
    }
}
