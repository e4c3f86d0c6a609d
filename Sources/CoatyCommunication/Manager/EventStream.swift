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
/// (`bufferingNewest`). The iterator takes everything buffered at once and hands it out one by one,
/// so with the events it holds a stream keeps at most twice that many. Only one task may iterate a
/// stream.
public struct EventStream<Event: Sendable>: AsyncSequence, Sendable {
    /// The element type.
    public typealias Element = Event
    /// Streams finish instead of throwing.
    public typealias Failure = Never

    /// Owned by the stream and its iterators: when the last of them is gone, the stream terminates,
    /// which releases the subscription.
    @usableFromInline
    final class Consumer: Sendable {
        @usableFromInline let channel: EventChannel<Event>

        init(channel: EventChannel<Event>) { self.channel = channel }

        deinit { self.channel.finish() }
    }

    /// The producer's side of a stream.
    package struct Continuation: Sendable {
        let channel: EventChannel<Event>

        @discardableResult
        package func yield(_ event: Event) -> EventChannel<Event>.YieldResult { self.channel.yield(event) }

        package func finish() { self.channel.finish() }

        /// Sets the handler run once when the stream terminates (see ``EventChannel``).
        package func onTermination(_ handler: @escaping @Sendable () -> Void) { self.channel.setOnTermination(handler) }
    }

    @usableFromInline let consumer: Consumer

    var channel: EventChannel<Event> { self.consumer.channel }

    /// A stream that buffers at most `capacity` events (newest kept), and its producer's side.
    package static func makeStream(bufferingNewest capacity: Int) -> (stream: EventStream, continuation: Continuation) {
        let channel = EventChannel<Event>(bufferingNewest: Swift.max(1, capacity))
        return (EventStream(consumer: Consumer(channel: channel)), Continuation(channel: channel))
    }

    /// The iterator of an ``EventStream``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let consumer: Consumer
        /// Events taken from the channel in one go, delivered from `position` on.
        private var batch: [Event] = []
        private var position = 0

        init(consumer: Consumer) { self.consumer = consumer }

        /// The next event, or `nil` when the stream has finished or the task is cancelled.
        public mutating func next() async -> Event? {
            await self.next(isolation: nil)
        }

        /// The next event, or `nil` when the stream has finished or the task is cancelled; waits on
        /// the caller's actor, so an actor-isolated consumer does not hop executors.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Event? {
            if self.position < self.batch.count {
                defer { self.position += 1 }
                return self.batch[self.position]
            }
            self.batch.removeAll(keepingCapacity: self.batch.count <= 64)
            self.position = 0
            return await self.consumer.channel.next(batch: &self.batch, isolation: actor)
        }
    }

    /// Makes the iterator.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(consumer: self.consumer)
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
    ///   - actor: The caller's actor, where the wait happens; leave it to the default.
    /// - Returns: The first event.
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/timedOut`` if no event
    ///   arrived in time, with ``CommunicationError/Code/notRunning`` if the stream finished first;
    ///   `CancellationError` if the task is cancelled.
    @inlinable
    public func first<C: Clock>(
        timeout: Duration,
        clock: C = ContinuousClock(),
        isolation actor: isolated (any Actor)? = #isolation
    ) async throws -> Event where C.Duration == Duration {
        // An answer that is already here (a handler answered on the publishing path) needs no timer,
        // and is taken in the same step that finishes the stream. This part is inlined into the
        // caller, specialised for its event type (see ``EventChannel``).
        if case .some(.some(let event)) = self.consumer.channel.takeFirstAndFinish() { return event }
        return try await self.waitForFirst(timeout: timeout, clock: clock, isolation: actor)
    }

    /// ``first(timeout:clock:isolation:)`` when the answer is not in yet, or the stream has ended
    /// without one (then ``EventChannel/next(isolation:)`` returns `nil` at once).
    @usableFromInline
    func waitForFirst<C: Clock>(
        timeout: Duration,
        clock: C,
        isolation actor: isolated (any Actor)?
    ) async throws -> Event where C.Duration == Duration {
        let channel = self.channel
        defer { channel.finish() }
        let event: Event?
        if C.self == ContinuousClock.self {
            // The common case waits in the calling task and times out through the shared deadline
            // timer: no child task, no timer of its own, so an answer wakes the caller directly
            // (see Docs/Benchmarks.md). The handler holds only the channel, which a timeout marks,
            // so scheduling it allocates nothing more.
            let token = DeadlineTimer.shared.schedule(after: timeout) { channel.expire() }
            defer { DeadlineTimer.shared.cancel(token) }
            event = await channel.next(isolation: actor)
        } else {
            event = await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    guard (try? await clock.sleep(for: timeout)) != nil else { return }
                    channel.expire()
                }
                defer { group.cancelAll() }
                return await channel.next(isolation: actor)
            }
        }
        if let event { return event }
        try Task.checkCancellation()
        if channel.hasExpired.load(ordering: .acquiring) {
            throw CommunicationError(.timedOut, "no event within \(timeout)")
        }
        throw CommunicationError(.notRunning, "the stream finished before an event arrived")
    }
}
