import CoatyCore
import CoatyModel
import CoatyTesting
import Synchronization
import Testing

@testable import CoatyCommunication

/// The semantics of ``EventStream`` and its ``EventChannel``, which replaced `AsyncStream`.
@Suite(.timeLimit(.minutes(1)))
struct EventStreamTests {
    /// Counts how often a termination handler runs.
    final class Counter: Sendable {
        private let value = Atomic(0)
        var count: Int { self.value.load(ordering: .acquiring) }
        func increment() { self.value.add(1, ordering: .acquiringAndReleasing) }
    }

    @Test func bufferedEventsAreDeliveredInOrderAfterFinish() async {
        let (stream, continuation) = EventStream<Int>.makeStream(bufferingNewest: 10)
        let terminations = Counter()
        continuation.onTermination { terminations.increment() }
        for value in 1...3 { #expect(continuation.yield(value) == .enqueued) }
        continuation.finish()
        continuation.finish()
        #expect(continuation.yield(4) == .terminated)
        var received: [Int] = []
        for await value in stream { received.append(value) }
        #expect(received == [1, 2, 3])
        #expect(terminations.count == 1)
    }

    @Test func fullBufferDropsTheOldest() async {
        let (stream, continuation) = EventStream<Int>.makeStream(bufferingNewest: 3)
        let results = (1...5).map { continuation.yield($0) }
        #expect(results == [.enqueued, .enqueued, .enqueued, .dropped, .dropped])
        continuation.finish()
        var received: [Int] = []
        for await value in stream { received.append(value) }
        #expect(received == [3, 4, 5])
    }

    /// The iterator takes everything buffered at once; those events no longer count against the
    /// capacity, and order is kept across batches.
    @Test func iteratorTakesBatchesInOrder() async {
        let (stream, continuation) = EventStream<Int>.makeStream(bufferingNewest: 3)
        for value in 1...3 { continuation.yield(value) }
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == 1)
        #expect((4...6).map { continuation.yield($0) } == [.enqueued, .enqueued, .enqueued])
        #expect(continuation.yield(7) == .dropped)
        continuation.finish()
        var received: [Int] = []
        while let value = await iterator.next() { received.append(value) }
        #expect(received == [2, 3, 5, 6, 7])
    }

    @Test func cancellingTheWaitingConsumerTerminatesOnce() async {
        let (stream, continuation) = EventStream<Int>.makeStream(bufferingNewest: 10)
        let terminations = Counter()
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        continuation.onTermination { terminations.increment() }
        let consumer = Task {
            var iterator = stream.makeAsyncIterator()
            startedContinuation.yield()
            return await iterator.next()
        }
        for await _ in started { break }
        consumer.cancel()
        #expect(await consumer.value == nil)
        #expect(continuation.yield(1) == .terminated)
        continuation.finish()
        #expect(terminations.count == 1)
    }

    @Test func droppingTheStreamTerminatesIt() {
        let terminations = Counter()
        var continuation: EventStream<Int>.Continuation?
        do {
            let made = EventStream<Int>.makeStream(bufferingNewest: 10)
            continuation = made.continuation
            made.continuation.onTermination { terminations.increment() }
            var iterator = made.stream.makeAsyncIterator()
            _ = iterator
            iterator = made.stream.makeAsyncIterator()
        }
        #expect(terminations.count == 1)
        #expect(continuation?.yield(1) == .terminated)
    }

    @Test func onTerminationSetAfterTheEndRunsAtOnce() {
        let (_, continuation) = EventStream<Int>.makeStream(bufferingNewest: 1)
        continuation.finish()
        let terminations = Counter()
        continuation.onTermination { terminations.increment() }
        #expect(terminations.count == 1)
    }

    /// A producer on another task and a consumer that waits for each event: nothing is lost or reordered.
    @Test func concurrentProducerAndConsumerKeepOrder() async {
        let (stream, continuation) = EventStream<Int>.makeStream(bufferingNewest: 100_000)
        let count = 50_000
        let producer = Task.detached {
            for value in 0..<count { continuation.yield(value) }
            continuation.finish()
        }
        var expected = 0
        var inOrder = true
        for await value in stream {
            inOrder = inOrder && value == expected
            expected += 1
        }
        await producer.value
        #expect(inOrder)
        #expect(expected == count)
    }

    @MainActor @Test func actorIsolatedConsumerReceives() async {
        let (stream, continuation) = EventStream<Int>.makeStream(bufferingNewest: 1_000)
        let producer = Task.detached {
            for value in 0..<100 { continuation.yield(value) }
            continuation.finish()
        }
        var sum = 0
        for await value in stream { sum += value }
        await producer.value
        #expect(sum == (0..<100).reduce(0, +))
    }

    /// `first(timeout:)` takes an event that is already there, and times out or reports a finished
    /// stream otherwise; in every case it ends the stream.
    @Test func firstTakesABufferedEventTimesOutOrReportsTheEnd() async throws {
        let (ready, readyContinuation) = EventStream<Int>.makeStream(bufferingNewest: 10)
        let readyTerminations = Counter()
        readyContinuation.onTermination { readyTerminations.increment() }
        readyContinuation.yield(7)
        #expect(try await ready.first(timeout: .seconds(5)) == 7)
        #expect(readyTerminations.count == 1)

        let (silent, silentContinuation) = EventStream<Int>.makeStream(bufferingNewest: 10)
        await #expect { _ = try await silent.first(timeout: .milliseconds(20)) } throws: {
            ($0 as? CommunicationError)?.code == .timedOut
        }
        #expect(silentContinuation.yield(1) == .terminated)

        let (ended, endedContinuation) = EventStream<Int>.makeStream(bufferingNewest: 10)
        endedContinuation.finish()
        await #expect { _ = try await ended.first(timeout: .seconds(5)) } throws: {
            ($0 as? CommunicationError)?.code == .notRunning
        }
    }

    /// When the timeout ends the wait, the termination handler (which releases a request's response
    /// subscription) has finished by the time `first(timeout:)` throws, although the timer's thread
    /// runs it. The handler here is slow on purpose, so that a consumer woken before it ends would see
    /// it unfinished. (A cancellation takes the same path, `EventChannel.Ending.complete()`; a test of
    /// it here did not fail on the old order, because the cancelling thread ran the handler before
    /// the consumer got a thread, so it is not kept.)
    @Test func firstThrowsOnlyOnceTheTerminationHandlerHasRun() async throws {
        let (stream, continuation) = EventStream<Int>.makeStream(bufferingNewest: 10)
        let handled = Counter()
        continuation.onTermination {
            let end = ContinuousClock.now + .milliseconds(20)
            while ContinuousClock.now < end {}
            handled.increment()
        }
        let waiting = Task {
            do {
                _ = try await stream.first(timeout: .milliseconds(10))
            } catch {}
            return handled.count
        }
        #expect(await waiting.value == 1)
    }

    /// `first(timeout:)` takes an answer that came in before the stream finished, ends the stream in
    /// the same step (later events are refused), and the termination handler runs once, also when
    /// the stream is dropped afterwards.
    @Test func firstTakesAnAnswerThatCameBeforeTheEnd() async throws {
        let terminations = Counter()
        var continuation: EventStream<Int>.Continuation?
        do {
            let (stream, streamContinuation) = EventStream<Int>.makeStream(bufferingNewest: 10)
            continuation = streamContinuation
            streamContinuation.onTermination { terminations.increment() }
            streamContinuation.yield(1)
            streamContinuation.yield(2)
            streamContinuation.finish()
            #expect(terminations.count == 1)
            #expect(try await stream.first(timeout: .seconds(5)) == 1)
        }
        #expect(continuation?.yield(3) == .terminated)
        #expect(terminations.count == 1)

        let (open, openContinuation) = EventStream<Int>.makeStream(bufferingNewest: 10)
        let openTerminations = Counter()
        openContinuation.onTermination { openTerminations.increment() }
        openContinuation.yield(5)
        #expect(try await open.first(timeout: .seconds(5)) == 5)
        #expect(openContinuation.yield(6) == .terminated)
        openContinuation.finish()
        #expect(openTerminations.count == 1)
    }

    /// A manager observation that is dropped without being iterated releases its subscription.
    @Test func droppedObservationReleasesItsSubscription() async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let clientID = managers[0].clientID
            func channelFilters() -> [String] {
                bus.filters(ofClientID: clientID).map(\.rawValue).filter { $0.contains("/CHN:") }
            }
            do {
                let stream = try await managers[0].observeChannel("dropped")
                #expect(channelFilters().count == 1)
                _ = stream
            }
            // The release goes through the send loop; a publication afterwards is sent after it.
            let states = await managers[0].observeAdvertise(coreType: .coatyObject)
            try await managers[0].publish(AdvertiseEvent(CoatyObject(objectType: "coaty.CoatyObject", name: "x")))
            _ = try await states.first(timeout: .seconds(5))
            #expect(channelFilters().isEmpty)
        }
    }
}
