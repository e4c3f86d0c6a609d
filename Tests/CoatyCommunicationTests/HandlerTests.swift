import CoatyCore
import CoatyModel
import CoatyTesting
import Synchronization
import Testing

@testable import CoatyCommunication

@Suite(.timeLimit(.minutes(1)))
struct HandlerTests {
    @Test func handlerAnswersCallsUntilCancelled() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let registration = try await managers[1].handleCalls("com.example.add") { call in
                guard let a = call.parameter(at: 0)?.intValue, let b = call.parameter(at: 1)?.intValue else {
                    throw CommunicationError(.invalidArgument, "not two integers")
                }
                try call.returnResult(.int(a + b))
            }
            let sum = try await managers[0].call(CallEvent(operation: "com.example.add", parameters: [2, 3]))
                .first(timeout: .seconds(5))
            #expect(sum.result == 5)

            // A throwing handler is logged; the next Call is still answered.
            let bad = try await managers[0].call(CallEvent(operation: "com.example.add", parameters: ["x"]))
            let good = try await managers[0].call(CallEvent(operation: "com.example.add", parameters: [40, 2]))
            #expect(try await good.first(timeout: .seconds(5)).result == 42)
            await #expect { _ = try await bad.first(timeout: .milliseconds(50)) } throws: {
                ($0 as? CommunicationError)?.code == .timedOut
            }

            registration.cancel()
            #expect(!registration.isActive)
            let unanswered = try await managers[0].call(CallEvent(operation: "com.example.add", parameters: [1, 1]))
            await #expect { _ = try await unanswered.first(timeout: .milliseconds(50)) } throws: {
                ($0 as? CommunicationError)?.code == .timedOut
            }
        }
    }

    @Test func handlersEndWhenTheManagerStops() async throws {
        let registration = try await withOnlineManagers(count: 1) { managers, _ in
            let registration = try await managers[0].handleCalls("com.example.noop") { try $0.returnResult(nil) }
            #expect(registration.isActive)
            return registration
        }
        #expect(!registration.isActive)
    }

    @Test func discoverAndQueryHandlersAnswer() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let store = [thing("Thing1", floor: 5), thing("Thing2", floor: 7)]
            let discovers = await managers[1].handleDiscover { discover in
                guard let match = store.first(where: { $0.objectID == discover.objectID }) else { return }
                try discover.resolve(ResolveEvent(object: match))
            }
            let queries = await managers[1].handleQuery { query in
                try query.retrieve(RetrieveEvent(objects: query.objectFilter.apply(to: store)))
            }
            defer {
                discovers.cancel()
                queries.cancel()
            }
            let resolve = try await managers[0].discover(DiscoverEvent.byObjectID(store[1].objectID))
                .first(timeout: .seconds(5))
            #expect(resolve.object?.objectID == store[1].objectID)
            let query = try QueryEvent.byObjectTypes(
                ["com.example.Thing"],
                filter: ObjectFilter(conditions: .and([FilterCondition("floor", .equals(5))]))
            )
            let retrieve = try await managers[0].query(query).first(timeout: .seconds(5))
            #expect(retrieve.objects.map(\.objectID) == [store[0].objectID])
        }
    }

    /// A request published directly must not overtake a one-way event the same task queued before it.
    @Test func requestsDoNotOvertakeQueuedPublications() async throws {
        try await withOnlineManagers(count: 2) { managers, bus in
            let taps = bus.messages()
            let registration = try await managers[1].handleCalls("com.example.noop") { try $0.returnResult(nil) }
            defer { registration.cancel() }
            let things = (0..<20).map { thing("Thing\($0)") }
            for object in things { try managers[0].publish(AdvertiseEvent(object)) }
            _ = try await managers[0].call(CallEvent(operation: "com.example.noop")).first(timeout: .seconds(5))
            var order: [String] = []
            for await message in taps {
                if message.topic.contains("/ADV:CoatyObject/") || message.topic.contains("/CLL:") {
                    order.append(message.topic.contains("/CLL:") ? "call" : "advertise")
                }
                if order.last == "call" { break }
            }
            #expect(order == Array(repeating: "advertise", count: 20) + ["call"])
        }
    }

    /// Finished requests release their response subscriptions in batches, not one wake-up each.
    @Test func finishedRequestsReleaseTheirResponseSubscriptions() async throws {
        try await withOnlineManagers(count: 2) { managers, bus in
            let registration = try await managers[1].handleCalls("com.example.noop") { try $0.returnResult(nil) }
            defer { registration.cancel() }
            for _ in 0..<40 {
                _ = try await managers[0].call(CallEvent(operation: "com.example.noop")).first(timeout: .seconds(5))
            }
            // A queued publication wakes the send loop, which sends the pending unsubscriptions first.
            let advertises = await managers[1].observeAdvertise(coreType: .coatyObject)
            try managers[0].publish(AdvertiseEvent(thing()))
            _ = try await advertises.first(timeout: .seconds(5))
            let clientID = managers[0].clientID
            let filters = bus.state.withLock { state in
                state.sessions.values.first { $0.session.clientID == clientID }?.filters.map(\.rawValue) ?? []
            }
            #expect(filters.allSatisfy { !$0.contains("/RTN/") }, "left over: \(filters)")
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct DeadlineTimerTests {
    @Test func earlierDeadlineFiresFirstAndCancelledOnesNever() async throws {
        let timer = DeadlineTimer()
        let (fired, continuation) = AsyncStream<String>.makeStream()
        _ = timer.schedule(after: .seconds(30)) { continuation.yield("late") }
        let cancelled = timer.schedule(after: .milliseconds(5)) { continuation.yield("cancelled") }
        timer.cancel(cancelled)
        _ = timer.schedule(after: .milliseconds(20)) { continuation.yield("soon") }
        _ = timer.schedule(after: .milliseconds(10)) { continuation.yield("sooner") }
        var order: [String] = []
        for await name in fired {
            order.append(name)
            if order.count == 2 { break }
        }
        #expect(order == ["sooner", "soon"])
    }

    @Test func manyCancelledDeadlinesAreCompactedAndTheLiveOneStillFires() async throws {
        let timer = DeadlineTimer()
        let (fired, continuation) = AsyncStream<Int>.makeStream()
        for index in 0..<5_000 {
            timer.cancel(timer.schedule(after: .seconds(60)) { continuation.yield(index) })
        }
        _ = timer.schedule(after: .milliseconds(1)) { continuation.yield(-1) }
        var iterator = fired.makeAsyncIterator()
        #expect(await iterator.next() == -1)
    }
}
