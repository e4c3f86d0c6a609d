import Testing

@testable import CoatySockets

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct WakeChannelTests {
    /// Polls the channel without waiting: whether it is readable now.
    private func isReadable(_ channel: WakeChannel) -> Bool {
        var descriptor = pollfd(fd: channel.readFD, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 1 && descriptor.revents & Int16(POLLIN) != 0
    }

    @Test func wakesCoalesceUntilDrained() throws {
        let channel = try #require(WakeChannel())
        defer { channel.close() }
        #expect(!self.isReadable(channel))
        channel.wake()
        channel.wake()
        channel.wake()
        #expect(self.isReadable(channel))
        channel.drain()
        #expect(!self.isReadable(channel))
        channel.wake()
        #expect(self.isReadable(channel))
    }

    @Test func descriptorsAreNonBlockingAndCloseOnExec() throws {
        let channel = try #require(WakeChannel())
        defer { channel.close() }
        for fd in [channel.readFD, channel.writeFD] {
            #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
            #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
        }
        // Draining an empty channel returns at once instead of blocking.
        channel.drain()
    }
}
