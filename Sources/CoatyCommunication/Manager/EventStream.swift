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

    init(base: AsyncStream<Event>) {
        self.base = base
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
    /// - Parameters:
    ///   - timeout: How long to wait.
    ///   - clock: The clock that measures `timeout`.
    /// - Returns: The first event.
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/timedOut`` if no event
    ///   arrived in time, with ``CommunicationError/Code/notRunning`` if the stream finished first;
    ///   `CancellationError` if the task is cancelled.
    public func first<C: Clock>(timeout: Duration, clock: C = ContinuousClock()) async throws -> Event
    where C.Duration == Duration {
        let base = self.base
        return try await withThrowingTaskGroup(of: Event?.self) { group in
            group.addTask {
                for await event in base { return event }
                try Task.checkCancellation()
                throw CommunicationError(.notRunning, "the stream finished before an event arrived")
            }
            group.addTask {
                try await clock.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else {
                throw CancellationError()
            }
            guard let event = first else {
                throw CommunicationError(.timedOut, "no event within \(timeout)")
            }
            return event
        }
    }
}
