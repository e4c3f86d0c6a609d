#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one reactor that every socket of the process is registered with.
///
/// Created, and its thread started, on first use. The backend is chosen then, once, from the
/// environment variable `COATY_REACTOR` (``ReactorKind/environmentVariable``): unset or empty means
/// epoll on Linux and poll elsewhere; `poll` and `epoll` force one. A value that names no backend
/// available here stops the process: running quietly on another backend than the one asked for would
/// make a test run claim what it did not test.
enum SharedReactor {
    /// The backend this process uses.
    static let kind: ReactorKind = {
        let value = getenv(ReactorKind.environmentVariable).map { String(cString: $0) }
        guard let kind = ReactorKind.selected(by: value) else {
            let available = ReactorKind.allCases.filter(\.isAvailable).map(\.rawValue)
            preconditionFailure(
                "CoatySockets: \(ReactorKind.environmentVariable)=\(value ?? "") names no reactor available here "
                    + "(available: \(available.joined(separator: ", ")))"
            )
        }
        return kind
    }()

    /// The reactor, of ``kind``.
    static let instance: any Reactor = {
        PlatformShims.ignoreBrokenPipeSignal()
        switch Self.kind {
        case .epoll:
            guard let reactor = EpollReactor.start() else {
                preconditionFailure("CoatySockets: epoll_create1 failed with errno \(errno)")
            }
            return reactor
        case .poll:
            guard let reactor = PollReactor.start() else {
                preconditionFailure("CoatySockets: cannot create the poll reactor's wake-up channel (errno \(errno))")
            }
            return reactor
        }
    }()
}
