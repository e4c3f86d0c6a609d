import CoatySockets
import Foundation
import Synchronization

/// Loopback ports for tests that start a server on a port they choose, or that need a port nobody
/// listens on.
///
/// Why not port 0's answer: the kernel hands ephemeral ports out again, to the next `bind(0)` of a
/// parallel test or to an outgoing connection. A mosquitto started on such a port fails to bind and
/// the test then talks to whoever holds it (seen in CI as "closed the connection"); a test that
/// rebinds a port it released finds it taken (`EADDRINUSE`). Ports below the kernel's ephemeral
/// range are never handed out by `bind(0)` or by outgoing connections, and remembering the ones
/// returned rules out two tests of this process getting the same one.
package enum LoopbackPort {
    /// A port below the ephemeral range, free on 127.0.0.1 when checked, that no earlier call in this
    /// process has returned.
    ///
    /// - Throws: `SocketError` when no such port is free.
    package static func unused() throws -> Int {
        let upperBound = Self.ephemeralRangeStart
        let lowerBound = max(1024, upperBound - 12_000)
        var candidate = Int.random(in: lowerBound..<upperBound)
        for _ in lowerBound..<upperBound {
            candidate = candidate + 1 < upperBound ? candidate + 1 : lowerBound
            guard handedOut.withLock({ $0.insert(candidate).inserted }) else { continue }
            if let probe = try? TCPListener.bind(port: candidate) {
                probe.close()
                return candidate
            }
        }
        throw SocketError(errno: EADDRINUSE, call: "bind(a port between \(lowerBound) and \(upperBound))")
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
