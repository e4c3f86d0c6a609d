/// The backends a ``Reactor`` can have.
package enum ReactorKind: String, Sendable, CaseIterable {
    /// ``EpollReactor``: Linux's `epoll`, edge-triggered. The default where the C library has it.
    case epoll
    /// ``PollReactor``: POSIX `poll(2)`. The only backend on Darwin.
    case poll

    /// The environment variable that chooses the backend: `COATY_REACTOR=poll` or `COATY_REACTOR=epoll`.
    package static let environmentVariable = "COATY_REACTOR"

    /// Whether this system has the backend: `poll` everywhere, `epoll` where the C library has it (Linux).
    package var isAvailable: Bool {
        switch self {
        case .epoll: Epoll.isAvailable
        case .poll: true
        }
    }

    /// The backend used when ``environmentVariable`` is unset or empty: epoll where available, else poll.
    package static var platformDefault: ReactorKind {
        Self.epoll.isAvailable ? .epoll : .poll
    }

    /// The backend a value of ``environmentVariable`` selects.
    ///
    /// - Parameter value: The variable's value, or `nil` when it is unset.
    /// - Returns: ``platformDefault`` for `nil` or an empty value; the named backend if it exists here;
    ///   `nil` for any other name, or for `epoll` on a system without it.
    package static func selected(by value: String?) -> ReactorKind? {
        guard let value, !value.isEmpty else { return Self.platformDefault }
        guard let kind = ReactorKind(rawValue: value), kind.isAvailable else { return nil }
        return kind
    }
}
