public import CoatyCore
public import Synchronization

/// The buffer between the producer of an ``EventStream``'s events and its one consumer.
///
/// It does what `AsyncStream` with `bufferingNewest` did for the stream, with less machinery: one
/// object and one lock, no continuation when an event is already waiting, and a plain termination
/// callback. Every request makes a response stream, and making, feeding, reading and finishing an
/// `AsyncStream` took about 1.4 µs against 0.15 µs for this type (Docs/Benchmarks.md).
///
/// Semantics, as `AsyncStream`'s:
/// - ``yield(_:)`` buffers at most `capacity` events and drops the oldest first;
/// - ``finish()`` refuses further events; the consumer still gets the buffered ones, then `nil`;
/// - the termination handler runs once, on ``finish()``, when the consuming task is cancelled while
///   it waits, or when the consumer side is dropped (``EventStream``'s `Consumer`);
/// - only one task may wait in ``next(isolation:)`` at a time.
///
/// Its one waiting consumer keeps its continuation in the channel's own state instead of a
/// `WaiterRegistry`: an event and the wake-up it causes are then decided under one lock, where the
/// registry would add a second lock and a table entry to every event a waiting consumer gets.
///
/// The iterator takes everything buffered at once (``next(batch:isolation:)``), so events it holds
/// for the consumer no longer count against the capacity: at most twice `capacity` events are held.
///
/// ``takeFirstAndFinish()`` and what it uses are `@inlinable`, so that
/// ``EventStream/first(timeout:clock:isolation:)``, called from the app's module, runs them
/// specialised for the event type: unspecialised generic code looks up the metadata of every generic
/// type it touches at run time, which took about 0.7 µs of the 2.3 µs that ending a request took (see
/// Docs/Benchmarks.md). A finished flag outside the lock lets the consumer's `deinit`, which always
/// runs unspecialised, return at once when `first` has finished the stream.
@usableFromInline
package final class EventChannel<Event: Sendable>: Sendable {
    /// What ``yield(_:)`` did with an event.
    package enum YieldResult: Sendable {
        /// Handed to the waiting consumer or buffered.
        case enqueued
        /// Buffered, and the oldest buffered event was dropped to make room.
        case dropped
        /// Refused: the stream has finished.
        case terminated
    }

    @usableFromInline
    struct State: Sendable {
        @usableFromInline var buffer: BoundedQueue<Event>
        @usableFromInline var waiter: UnsafeContinuation<Event?, Never>?
        @usableFromInline var isTerminated = false
        @usableFromInline var onTermination: (@Sendable () -> Void)?

        init(buffer: BoundedQueue<Event>) { self.buffer = buffer }
    }

    @usableFromInline let state: Mutex<State>
    /// Set once the stream has terminated, after `state.isTerminated`: lets ``finish()`` return
    /// without the lock (and without generic metadata look-ups) when there is nothing left to do.
    @usableFromInline let hasFinished = Atomic<Bool>(false)
    /// Set by ``expire()``: a `first(timeout:)` timed out, which it tells apart from another end.
    let hasExpired = Atomic<Bool>(false)

    init(bufferingNewest capacity: Int) {
        self.state = Mutex(State(buffer: BoundedQueue(capacity: capacity)))
    }

    /// Sets the handler run once when the stream terminates; runs it at once if it already has.
    func setOnTermination(_ handler: @escaping @Sendable () -> Void) {
        let hasTerminated = self.state.withLock { state -> Bool in
            guard !state.isTerminated else { return true }
            state.onTermination = handler
            return false
        }
        if hasTerminated { handler() }
    }

    @discardableResult
    func yield(_ event: Event) -> YieldResult {
        let (waiter, result) = self.state.withLock { state -> (UnsafeContinuation<Event?, Never>?, YieldResult) in
            if state.isTerminated { return (nil, .terminated) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, .enqueued)
            }
            return (nil, state.buffer.append(event) == nil ? .enqueued : .dropped)
        }
        waiter?.resume(returning: event)
        return result
    }

    /// Buffers `event` (or hands it to the waiting consumer) only if the buffer has room: a full
    /// buffer refuses it with ``YieldResult/dropped`` and keeps what it holds, so the consumer sees
    /// the oldest events and can be told how many newer ones it missed.
    func yieldIfRoom(_ event: Event) -> YieldResult {
        let (waiter, result) = self.state.withLock { state -> (UnsafeContinuation<Event?, Never>?, YieldResult) in
            if state.isTerminated { return (nil, .terminated) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, .enqueued)
            }
            guard state.buffer.count < state.buffer.capacity else { return (nil, .dropped) }
            state.buffer.append(event)
            return (nil, .enqueued)
        }
        waiter?.resume(returning: event)
        return result
    }

    /// Ends the stream because a `first(timeout:)` waiting on it timed out.
    func expire() {
        self.hasExpired.store(true, ordering: .releasing)
        self.finish()
    }

    /// Ends the stream. Idempotent.
    func finish() {
        if self.hasFinished.load(ordering: .acquiring) { return }
        self.state.withLock { self.terminate(&$0) }?.complete()
    }

    /// What ending the stream leaves to do outside the lock: run the termination handler, then wake
    /// the waiting consumer with the end (a waiter exists only while the buffer is empty).
    ///
    /// In that order, a consumer woken by an end that another thread caused (a timeout's timer, a
    /// cancelling task) finds the handler's work done: a request whose `first(timeout:)` throws has
    /// released its response subscription, as when it returns.
    @usableFromInline
    struct Ending {
        @usableFromInline let waiter: UnsafeContinuation<Event?, Never>?
        @usableFromInline let onTermination: (@Sendable () -> Void)?

        @usableFromInline init(waiter: UnsafeContinuation<Event?, Never>?, onTermination: (@Sendable () -> Void)?) {
            self.waiter = waiter
            self.onTermination = onTermination
        }

        @inlinable func complete() {
            self.onTermination?()
            self.waiter?.resume(returning: nil)
        }
    }

    /// Marks the stream terminated, under the lock, and sets the flag ``finish()`` reads without it.
    /// Returns what is left to do once the lock is released, or `nil` if the stream had already
    /// terminated.
    @inlinable
    func terminate(_ state: inout State) -> Ending? {
        guard !state.isTerminated else { return nil }
        state.isTerminated = true
        self.hasFinished.store(true, ordering: .releasing)
        defer {
            state.waiter = nil
            state.onTermination = nil
        }
        return Ending(waiter: state.waiter, onTermination: state.onTermination)
    }

    /// The next event, with every other buffered event moved to the end of `batch`; `nil` once the
    /// stream has finished and its buffer is empty. Cancelling the waiting task finishes the stream.
    ///
    /// A consumer that keeps up with the producer then takes the lock once per burst instead of once
    /// per event, which matters when both run at full speed on two cores.
    func next(batch: inout [Event], isolation actor: isolated (any Actor)? = #isolation) async -> Event? {
        let ready = self.state.withLock { state -> Event?? in
            let ready = Self.take(from: &state)
            if case .some(.some) = ready { state.buffer.moveAll(appendingTo: &batch) }
            return ready
        }
        if let ready { return ready }
        return await self.next(isolation: actor)
    }

    /// The next event; `nil` once the stream has finished and its buffer is empty. Cancelling the
    /// waiting task finishes the stream.
    func next(isolation actor: isolated (any Actor)? = #isolation) async -> Event? {
        if let ready = self.state.withLock({ Self.take(from: &$0) }) { return ready }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (waiter: UnsafeContinuation<Event?, Never>) in
                let ready = self.state.withLock { state -> Event?? in
                    if let ready = Self.take(from: &state) { return ready }
                    precondition(state.waiter == nil, "only one task may iterate an EventStream at a time")
                    state.waiter = waiter
                    return nil
                }
                if let ready { waiter.resume(returning: ready) }
            }
        } onCancel: {
            self.finish()
        }
    }

    /// Takes the first buffered event and finishes the stream in one step, or returns `.some(nil)`
    /// if the stream has finished and is drained; returns `nil`, leaving the stream open, when the
    /// caller would have to wait. What ``EventStream/first(timeout:clock:isolation:)`` does when the
    /// answer is already in (a handler answered on the publishing path).
    @inlinable
    func takeFirstAndFinish() -> Event?? {
        let (taken, ending) = self.state.withLock { state -> (Event??, Ending?) in
            guard let taken = Self.take(from: &state) else { return (nil, nil) }
            return (taken, self.terminate(&state))
        }
        ending?.complete()
        return taken
    }

    /// A buffered event, or `.some(nil)` when finished and drained, or `nil` when the caller must wait.
    @inlinable
    static func take(from state: inout State) -> Event?? {
        if let event = state.buffer.popFirst() { return .some(event) }
        if state.isTerminated { return .some(nil) }
        return nil
    }
}
