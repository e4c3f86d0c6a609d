import Synchronization

/// A handler installed with one of the manager's `handle…` methods, such as
/// ``CommunicationManager/handleCalls(_:context:_:)``.
///
/// The handler is called for every matching event until ``cancel()`` is called or the manager's
/// ``CommunicationManager/run()`` returns. Cancelling releases the subscription.
public final class EventHandlerRegistration: Sendable {
    private struct State {
        var isActive = true
        var release: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    init() {}

    /// Whether the handler is still called: `false` after ``cancel()`` and once the manager stopped.
    public var isActive: Bool { self.state.withLock { $0.isActive } }

    /// Stops calling the handler and releases its subscription. Calling it again does nothing.
    public func cancel() {
        let release = self.state.withLock { state -> (@Sendable () -> Void)? in
            state.isActive = false
            defer { state.release = nil }
            return state.release
        }
        release?()
    }

    /// Sets how the subscription is released; releases at once if already cancelled.
    func setRelease(_ release: @escaping @Sendable () -> Void) {
        let releaseNow = self.state.withLock { state -> Bool in
            guard state.isActive else { return true }
            state.release = release
            return false
        }
        if releaseNow { release() }
    }

    /// The manager stopped: the handler is no longer called. Its routing entries are already gone.
    func end() {
        self.state.withLock { state in
            state.isActive = false
            state.release = nil
        }
    }
}
