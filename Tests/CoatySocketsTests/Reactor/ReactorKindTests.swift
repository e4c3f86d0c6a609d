import Testing

@testable import CoatySockets

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct ReactorKindTests {
    @Test func unsetOrEmptyMeansThePlatformDefault() {
        #expect(ReactorKind.selected(by: nil) == ReactorKind.platformDefault)
        #expect(ReactorKind.selected(by: "") == ReactorKind.platformDefault)
    }

    @Test func epollIsTheDefaultWhereItExists() {
        #expect(ReactorKind.platformDefault == (Epoll.isAvailable ? .epoll : .poll))
        #expect(ReactorKind.poll.isAvailable)
    }

    @Test func aNameSelectsItsBackendIfAvailable() {
        #expect(ReactorKind.selected(by: "poll") == .poll)
        #expect(ReactorKind.selected(by: "epoll") == (Epoll.isAvailable ? .epoll : nil))
        #expect(ReactorKind.selected(by: "kqueue") == nil)
        #expect(ReactorKind.selected(by: "POLL") == nil)
    }

    /// The shared reactor is the one `COATY_REACTOR` asks for, so a run with `COATY_REACTOR=poll`
    /// really exercises the poll backend.
    @Test func theSharedReactorIsTheSelectedKind() throws {
        let value = getenv(ReactorKind.environmentVariable).map { String(cString: $0) }
        let expected = try #require(ReactorKind.selected(by: value))
        #expect(SharedReactor.kind == expected)
        switch expected {
        case .epoll: #expect(SharedReactor.instance is EpollReactor)
        case .poll: #expect(SharedReactor.instance is PollReactor)
        }
    }
}
