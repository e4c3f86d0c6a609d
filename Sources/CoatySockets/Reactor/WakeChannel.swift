#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How another thread interrupts a thread blocked in `poll`: the sleeper includes ``readFD`` in its
/// descriptor set, the waker calls ``wake()``, and the sleeper ``drain()``s once `poll` returns.
///
/// An `eventfd` on Linux, a pipe on Darwin (see ``PlatformShims/makeWakeDescriptors()``). Both take
/// 8-byte writes and are non-blocking, so wakes that arrive before a drain coalesce into one.
struct WakeChannel: Sendable {
    /// The descriptor to poll for input.
    let readFD: Int32
    /// The descriptor ``wake()`` writes to (the same as ``readFD`` for an `eventfd`).
    let writeFD: Int32

    /// Creates the descriptors; `nil` (with `errno`) if the system refuses.
    init?() {
        guard let (readFD, writeFD) = PlatformShims.makeWakeDescriptors() else { return nil }
        self.readFD = readFD
        self.writeFD = writeFD
    }

    /// Makes ``readFD`` readable. A full pipe (`EAGAIN`) already is, so that error is ignored.
    func wake() {
        var one: UInt64 = 1
        while write(self.writeFD, &one, MemoryLayout<UInt64>.size) < 0 && errno == EINTR {}
    }

    /// Reads everything written so far, so that ``readFD`` is no longer readable.
    func drain() {
        var scratch: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while true {
            let n = read(self.readFD, &scratch, MemoryLayout.size(ofValue: scratch))
            if n > 0 || (n < 0 && errno == EINTR) { continue }
            return
        }
    }

    /// Closes the descriptors.
    func close() {
        PlatformShims.close(self.readFD)
        if self.writeFD != self.readFD { PlatformShims.close(self.writeFD) }
    }
}
