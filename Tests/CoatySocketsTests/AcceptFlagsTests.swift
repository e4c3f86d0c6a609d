import Foundation
import Testing

@testable import CoatySockets

@Suite(.timeLimit(.minutes(1)))
struct AcceptFlagsTests {
    /// Accepted sockets are non-blocking and close-on-exec from the start, so a child process spawned
    /// at the same moment cannot inherit them.
    @Test func acceptedSocketsAreNonBlockingAndCloseOnExec() async throws {
        let listenFD = socket(AF_INET, PlatformShims.streamSocketType, 0)
        try #require(listenFD >= 0)
        defer { close(listenFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listenFD, $0, length) == 0 && listen(listenFD, 1) == 0 && getsockname(listenFD, $0, &length) == 0
            }
        }
        try #require(bound)
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: Int(UInt16(bigEndian: address.sin_port)))
        defer { client.close() }
        let accepted = Syscalls.acceptNonBlockingCloseOnExec(listenFD)
        try #require(accepted >= 0)
        defer { close(accepted) }
        #expect(fcntl(accepted, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(accepted, F_GETFL) & O_NONBLOCK != 0)
    }
}
