import Testing

@testable import CoatySockets

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Two connected, non-blocking Unix stream sockets, both registered with one reactor: the smallest
/// thing a reactor can report readiness for.
struct SocketPair {
    let first: SocketHandle
    let second: SocketHandle

    init(on reactor: any Reactor) throws {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, PlatformShims.streamSocketType, 0, &fds) == 0, "errno \(errno)")
        for fd in fds { PlatformShims.setNonBlockingCloseOnExec(fd) }
        self.first = try reactor.register(fd: fds[0])
        self.second = try reactor.register(fd: fds[1])
    }

    func close() {
        self.first.close()
        self.second.close()
    }
}

/// The reactors the direct tests run against: one of each kind this system has, each with its own
/// thread, separate from the shared reactor the rest of the tests use.
enum TestReactors {
    static let poll: PollReactor = PollReactor.start()!
    static let epoll: EpollReactor? = EpollReactor.start()

    static let availableKinds = ReactorKind.allCases.filter(\.isAvailable)

    static func reactor(_ kind: ReactorKind) throws -> any Reactor {
        switch kind {
        case .poll: Self.poll
        case .epoll: try #require(Self.epoll)
        }
    }
}

extension SocketHandle {
    /// How many readiness reports in `direction` the handle has had so far: pass it to
    /// `wait(_:since:call:)` to wait for the next one.
    func reportCount(_ direction: Direction) throws -> UInt64 {
        let count = try self.beginCall(direction, call: "test")
        self.endCall()
        return count
    }

    /// Waits for the reactor's next report in `direction`. With the poll backend the wait can only end
    /// through a report, so unlike a read, which finds data that is already there without waiting, it
    /// always exercises the reactor.
    func waitForReport(_ direction: Direction, after count: UInt64) async throws {
        try await self.wait(direction, since: count, call: "test")
    }

    /// Reads what is there, waiting for it if nothing is; empty at end of stream.
    func readAvailable(maxBytes: Int = 4096) async throws -> [UInt8] {
        try await self.perform(.read, call: "recv") { fd in
            var result: SocketHandle.CallResult<[UInt8]> = .wouldBlock
            let bytes = [UInt8](unsafeUninitializedCapacity: maxBytes) { buffer, count in
                switch Syscalls.receive(fd, into: UnsafeMutableRawBufferPointer(buffer)) {
                case .done(let n):
                    count = n
                    result = .done([])
                case .wouldBlock:
                    count = 0
                case .failed(let code):
                    count = 0
                    result = .failed(code)
                }
            }
            if case .done = result { return .done(bytes) }
            return result
        }
    }

    /// Writes all of `bytes`, waiting while the socket's buffer is full.
    func writeAll(_ bytes: [UInt8]) async throws {
        var offset = 0
        while offset < bytes.count {
            let start = offset
            offset += try await self.perform(.write, call: "send") { fd in
                bytes.withUnsafeBytes { Syscalls.send(fd, UnsafeRawBufferPointer(rebasing: $0[start...])) }
            }
        }
    }

    /// Sends until the socket's buffer is full, without waiting; returns how many bytes went.
    func fillSendBuffer() -> Int {
        let chunk = [UInt8](repeating: 7, count: 65_536)
        var total = 0
        while case .done(let n) = chunk.withUnsafeBytes({ Syscalls.send(self.fd, $0) }) { total += n }
        return total
    }
}
