import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Loopback ports for tests that start a server on a port they choose, or that need a port nobody
/// listens on.
///
/// Why not port 0's answer: the kernel hands ephemeral ports out again, to the next `bind(0)` of a
/// parallel test or to an outgoing connection. A mosquitto started on such a port fails to bind and
/// the test then talks to whoever holds it; a test that
/// rebinds a port it released finds it taken (`EADDRINUSE`). Ports below the kernel's ephemeral
/// range are never handed out by `bind(0)` or by outgoing connections, and remembering the ones
/// returned rules out two tests of this process getting the same one.
package enum LoopbackPort {
    /// A port below the ephemeral range, free on 127.0.0.1 when checked, that no earlier call in this
    /// process has returned.
    ///
    /// - Throws: ``LoopbackPortError`` when no such port is free.
    package static func unused() throws -> Int {
        let upperBound = Self.ephemeralRangeStart
        let lowerBound = max(1024, upperBound - 12_000)
        var candidate = Int.random(in: lowerBound..<upperBound)
        for _ in lowerBound..<upperBound {
            candidate = candidate + 1 < upperBound ? candidate + 1 : lowerBound
            guard handedOut.withLock({ $0.insert(candidate).inserted }) else { continue }
            if Self.canListen(on: candidate) { return candidate }
        }
        throw LoopbackPortError(description: "no free port between \(lowerBound) and \(upperBound)")
    }

    /// Whether a listening socket can be bound to `port` on 127.0.0.1 right now (with `SO_REUSEADDR`,
    /// as a server binds).
    private static func canListen(on port: Int) -> Bool {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var reuse: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7f00_0001).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return bound == 0 && listen(fd, 1) == 0
    }

    /// The ports returned so far.
    private static let handedOut = Mutex<Set<Int>>([])

    /// The first port of the kernel's ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`;
    /// 32768, Linux's default, where it cannot be read).
    private static let ephemeralRangeStart: Int = {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
            let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first,
            let start = Int(first), start > 2048
        else { return 32768 }
        return start
    }()
}

/// Why ``LoopbackPort/unused()`` found no port.
package struct LoopbackPortError: Error, CustomStringConvertible {
    /// What went wrong.
    package var description: String
}
