import Synchronization

/// An asynchronous sequence of events from a ``CommunicationManager``: observed events or the
/// responses to a request.
///
/// The subscription behind the stream is in place when the call that returned it returns. The stream
/// finishes when the manager stops; the subscription is released when the consumer stops iterating,
/// drops the stream or its task is cancelled. It never throws.
///
/// Each stream buffers at most `CommunicationManager.Configuration.observerBufferSize` undelivered
/// events; when a slow consumer lets the buffer fill up, the oldest events are dropped first
/// (`bufferingNewest`). Only one task may iterate a stream.
public struct EventStream<Event: Sendable>: AsyncSequence, Sendable {
    /// The element type.
    public typealias Element = Event
    /// Streams finish instead of throwing.
    public typealias Failure = Never

    let base: AsyncStream<Event>
    let finishBase: @Sendable () -> Void

    init(base: AsyncStream<Event>, continuation: AsyncStream<Event>.Continuation) {
        self.base = base
        self.finishBase = { continuation.finish() }
    }

    /// The iterator of an ``EventStream``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Event>.AsyncIterator

        /// The next event, or `nil` when the stream has finished or the task is cancelled.
        public mutating func next() async -> Event? {
            await self.base.next()
        }
    }

    /// Makes the iterator.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: self.base.makeAsyncIterator())
    }

    /// Waits for the first event, at most for `timeout`, and releases the subscription.
    ///
    /// Suspends until an event arrives, the stream finishes, or `timeout` elapses. Use it for
    /// requests where one answer is enough:
    ///
    /// ```swift
    /// let resolve = try await manager.discover(try DiscoverEvent.byObjectID(id)).first(timeout: .seconds(5))
    /// ```
    ///
    /// The stream is finished when this returns or throws, so its subscription is released at once.
    ///
    /// - Parameters:
    ///   - timeout: How long to wait.
    ///   - clock: The clock that measures `timeout`.
    /// - Returns: The first event.
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/timedOut`` if no event
    ///   arrived in time, with ``CommunicationError/Code/notRunning`` if the stream finished first;
    ///   `CancellationError` if the task is cancelled.
    public func first<C: Clock>(timeout: Duration, clock: C = ContinuousClock()) async throws -> Event
    where C.Duration == Duration {
        defer { self.finishBase() }
        let expiry = Expiry()
        let finish = self.finishBase
        let event: Event?
        if C.self == ContinuousClock.self {
            // The common case waits in the calling task and times out through the shared deadline
            // timer: no child task, no timer of its own, so an answer wakes the caller directly
            // (see Docs/Benchmarks.md).
            let token = DeadlineTimer.shared.schedule(after: timeout) {
                expiry.expire()
                finish()
            }
            defer { DeadlineTimer.shared.cancel(token) }
            var iterator = self.base.makeAsyncIterator()
            event = await iterator.next()
        } else {
            event = await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    guard (try? await clock.sleep(for: timeout)) != nil else { return }
                    expiry.expire()
                    finish()
                }
                defer { group.cancelAll() }
                var iterator = self.base.makeAsyncIterator()
                return await iterator.next()
            }
        }
        if let event { return event }
        try Task.checkCancellation()
        if expiry.isExpired { throw CommunicationError(.timedOut, "no event within \(timeout)") }
        throw CommunicationError(.notRunning, "the stream finished before an event arrived")
    }
}

/// Whether a ``EventStream/first(timeout:clock:)`` timed out.
private final class Expiry: Sendable {
    private let expired = Atomic<Bool>(false)
    var isExpired: Bool { self.expired.load(ordering: .acquiring) }
    func expire() { self.expired.store(true, ordering: .releasing) }
}
