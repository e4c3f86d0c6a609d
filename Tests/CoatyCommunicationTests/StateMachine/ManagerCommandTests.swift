import CoatyCore
import CoatyTransport
import Testing

@testable import CoatyCommunication

/// The transitions of ``ManagerStateMachine`` for subscriptions, releases and publications while
/// connected, each window fed as events in the order the race would take.
struct ManagerCommandTests {
    typealias Machine = ManagerStateMachine<String, String>

    /// Two observations of one filter: the first claims the subscription, and the second, which finds
    /// the filter claimed, waits for that subscription to be confirmed instead of returning before it
    /// is in place.
    @Test func aSecondObservationOfAFilterBeingSubscribedWaitsForIt() throws {
        var machine = Machine.online()
        let filter = try TopicFilter("coaty/3/-/ADV::com.example.Gated/+")
        #expect(machine.routing.add(machine.routing.makeID(), filter: filter, kind: .coaty, receiver: "a") != .none)
        guard case .claimed("c1", let claim?) = machine.claimDirectSubscription(of: filter, forResponses: false) else {
            Issue.record("the first observation did not claim the subscription")
            return
        }
        #expect(machine.routing.add(machine.routing.makeID(), filter: filter, kind: .coaty, receiver: "b") == .none)
        #expect(machine.waitForPendingSubscription(of: filter, waiter: token(30)) == true)
        #expect(machine.subscriptionEnded(filter, claim: claim) == [token(30)])
        #expect(machine.waitForPendingSubscription(of: filter, waiter: token(31)) == false)
    }

    /// A request's response filter is not registered as pending: requests count a subscription handed
    /// to the connection as in place.
    @Test func aResponseSubscriptionIsNotWaitedFor() throws {
        var machine = Machine.online()
        let filter = try TopicFilter("coaty/3/-/RTN/+/c1")
        let registration = machine.registerRequest([filter], receiver: "request")
        #expect(registration.claimed == [filter])
        #expect(registration.subscribeConnection == "c1")
        #expect(registration.publishConnection == "c1")
        #expect(machine.waitForPendingSubscription(of: filter, waiter: token(1)) == false)
    }

    /// While a subscription is queued, later ones queue behind it (so they are confirmed in order), and
    /// so does a subscription of a filter in the send loop's hands.
    @Test func subscriptionsGoDirectlyOnlyWhenNothingIsAheadOfThem() throws {
        var machine = Machine.online()
        let first = try TopicFilter("coaty/3/-/CHN:first/+")
        let second = try TopicFilter("coaty/3/-/CHN:second/+")
        for filter in [first, second] {
            _ = machine.routing.add(machine.routing.makeID(), filter: filter, kind: .coaty, receiver: "x")
        }
        #expect(machine.queueSubscription(first, waiter: token(1)) == .queued(wake: nil))
        #expect(machine.claimDirectSubscription(of: second, forResponses: false) == .unavailable)
        _ = machine.takeBatch()
        #expect(machine.claimDirectSubscription(of: first, forResponses: false) == .unavailable)
        guard case .claimed = machine.claimDirectSubscription(of: second, forResponses: false) else {
            Issue.record("a filter not in the batch could not be subscribed directly")
            return
        }
        machine.batchCommandsDone()
        #expect(machine.claimDirectSubscription(of: first, forResponses: false) != .unavailable)
    }

    /// A queued subscription of a filter that a finished request is releasing from its own task (a
    /// reused correlation id) waits until the release is handed over, then claims it; it used to spin.
    @Test func aQueuedSubscriptionWaitsForADirectReleaseOfItsFilter() throws {
        var machine = Machine.online()
        let filter = try TopicFilter("coaty/3/-/RTN/+/reused")
        let first = machine.registerRequest([filter], receiver: "first")
        let removal = machine.removeObservers(first.ids, deferringUnsubscribe: true)
        #expect(removal.directRelease == nil && removal.schedulesReleaseFlush)
        // The second request with the same correlation id cannot subscribe directly meanwhile; it
        // takes the held release along, to hand over before it waits.
        let second = machine.registerRequest([filter], receiver: "second")
        #expect(second.queued == [filter])
        #expect(second.releaseConnection == "c1" && second.releases == [filter])
        #expect(machine.queueSubscription(filter, waiter: token(40)) == .queued(wake: nil))
        guard case .batch(let commands, _, nil) = machine.takeBatch() else {
            Issue.record("no batch")
            return
        }
        #expect(commands == [.subscribe(filter, token(40))])
        #expect(machine.claimQueuedSubscription(filter) == .blockedByRelease)
        #expect(machine.waitForDirectRelease(of: filter, waiter: token(41)) == true)
        #expect(machine.directReleaseEnded([filter], released: true) == [token(41)])
        guard case .claimed = machine.claimQueuedSubscription(filter) else {
            Issue.record("the subscription was not claimed after the release")
            return
        }
    }

    /// A finished request's release is held for the next request's write, which takes every held
    /// release at once; one flush is scheduled per run of held releases, and it takes what no
    /// request took.
    @Test func finishedRequestsReleasesAreHeldForTheNextRequest() throws {
        var machine = Machine.online()
        let filters = try (0..<3).map { try TopicFilter("coaty/3/-/RTN/+/held\($0)") }
        let first = machine.registerRequest([filters[0]], receiver: "r0")
        #expect(first.releases.isEmpty && first.releaseConnection == nil)
        let second = machine.registerRequest([filters[1]], receiver: "r1")
        let firstRemoval = machine.removeObservers(first.ids, deferringUnsubscribe: true)
        let secondRemoval = machine.removeObservers(second.ids, deferringUnsubscribe: true)
        #expect(firstRemoval.schedulesReleaseFlush && firstRemoval.directRelease == nil)
        #expect(!secondRemoval.schedulesReleaseFlush && secondRemoval.directRelease == nil)
        // Held, still claimed for release: no one subscribes them meanwhile.
        let reclaim = machine.claimDirectSubscription(of: filters[0], forResponses: true)
        #expect(reclaim == .unavailable)
        let third = machine.registerRequest([filters[2]], receiver: "r2")
        #expect(third.claimed == [filters[2]])
        #expect(third.releaseConnection == "c1" && third.releases == [filters[0], filters[1]])
        let ended = machine.directReleaseEnded(third.releases, released: true)
        let flushed = machine.takeHeldReleases()
        #expect(ended == [] && flushed == nil)
        // The flush ran: the next release held schedules another, which takes it.
        let thirdRemoval = machine.removeObservers(third.ids, deferringUnsubscribe: true)
        #expect(thirdRemoval.schedulesReleaseFlush)
        let last = machine.takeHeldReleases()
        #expect(last?.filters == [filters[2]])
        #expect(machine.session?.directReleases.contains(filters[2]) == true)
        let lastEnded = machine.directReleaseEnded([filters[2]], released: true)
        #expect(lastEnded == [])
        #expect(machine.session?.directReleases.isEmpty == true)
    }

    /// The send loop's next batch takes the held releases too, ahead of its own commands, so that a
    /// queued subscription of the same filter (a reused correlation id) follows its release.
    @Test func theSendLoopsBatchTakesHeldReleasesFirst() throws {
        var machine = Machine.online()
        let filter = try TopicFilter("coaty/3/-/RTN/+/again")
        let first = machine.registerRequest([filter], receiver: "first")
        _ = machine.removeObservers(first.ids, deferringUnsubscribe: true)
        #expect(machine.queueSubscription(filter, waiter: token(60)) == .queued(wake: nil))
        guard case .batch(let commands, _, nil) = machine.takeBatch() else {
            Issue.record("no batch")
            return
        }
        #expect(commands == [.unsubscribe(filter), .subscribe(filter, token(60))])
        #expect(machine.session?.heldReleases.filters.isEmpty == true)
        #expect(machine.session?.directReleases.isEmpty == true)
        // Claimable again by the send loop: the release is one of its own commands now.
        let claimed = machine.routing.claimUnsubscribe(filter)
        #expect(claimed)
        let held = machine.takeHeldReleases()
        #expect(held == nil)
    }

    /// A graceful stop sends the held releases in its final batch: with a persistent session the
    /// broker would otherwise keep the response subscriptions.
    @Test func theFinalBatchTakesHeldReleases() throws {
        var machine = Machine.online()
        let filter = try TopicFilter("coaty/3/-/RTN/+/last")
        let request = machine.registerRequest([filter], receiver: "r")
        _ = machine.removeObservers(request.ids, deferringUnsubscribe: true)
        #expect(machine.stopRequested() == .drain(wake: nil))
        guard case .batch(let commands, _, let final?) = machine.takeBatch() else {
            Issue.record("no final batch")
            return
        }
        #expect(commands == [.unsubscribe(filter)])
        #expect(final.isEmpty)
        let claimed = machine.routing.claimUnsubscribe(filter)
        #expect(claimed)
    }

    /// Once a batch of releases is held, they are released at once instead of waiting longer.
    @Test func aBatchOfHeldReleasesIsReleasedAtOnce() throws {
        var machine = Machine.online()
        var released: [TopicFilter] = []
        var flushes = 0
        // Requests running at once, finishing one after another.
        let registrations = try (0..<Machine.deferredUnsubscribeBatch).map {
            machine.registerRequest([try TopicFilter("coaty/3/-/RTN/+/b\($0)")], receiver: "r")
        }
        for registration in registrations {
            let removal = machine.removeObservers(registration.ids, deferringUnsubscribe: true)
            if removal.schedulesReleaseFlush { flushes += 1 }
            if let release = removal.directRelease {
                #expect(release.connection == "c1")
                released += release.filters
            }
        }
        #expect(flushes == 1)
        #expect(released.count == Machine.deferredUnsubscribeBatch)
        #expect(machine.session?.heldReleases.filters.isEmpty == true)
    }

    /// A direct release the connection could not take is queued for the send loop; finished requests'
    /// unsubscriptions wake the parked loop only once a batch has piled up.
    @Test func deferredUnsubscriptionsWakeTheSendLoopInBatches() throws {
        var machine = Machine.online()
        #expect(machine.takeBatch() == .idle)
        #expect(machine.park(token(50)) == true)
        var wakes: [WaiterToken] = []
        for index in 0..<Machine.deferredUnsubscribeBatch {
            let filter = try TopicFilter("coaty/3/-/RTN/+/c\(index)")
            let registration = machine.registerRequest([filter], receiver: "r")
            let removal = machine.removeObservers(registration.ids, deferringUnsubscribe: true)
            #expect(removal.wake == nil)
            let held = machine.takeHeldReleases()
            let release = try #require(held)
            wakes += machine.directReleaseEnded(release.filters, released: false)
        }
        #expect(wakes == [token(50)])
        #expect(machine.session?.control.count == Machine.deferredUnsubscribeBatch)
    }

    /// A direct release that ends after its connection was lost queues nothing: the new connection
    /// has nothing subscribed to release.
    @Test func aDirectReleaseEndingAfterTheDisconnectQueuesNothing() throws {
        var machine = Machine.online()
        let filter = try TopicFilter("coaty/3/-/RTN/+/late")
        let registration = machine.registerRequest([filter], receiver: "r")
        _ = machine.removeObservers(registration.ids, deferringUnsubscribe: true)
        let held = machine.takeHeldReleases()
        #expect(held?.filters == [filter])
        _ = machine.connectionEnded(interrupt: token(2))
        _ = machine.backoffElapsed(abandon: token(3))
        #expect(machine.connected("c2") == .subscribe([]))
        _ = machine.initialSubscriptionsSent()
        _ = machine.joinSent()
        #expect(machine.directReleaseEnded([filter], released: false) == [])
        #expect(machine.session?.control.isEmpty == true)
    }

    /// Observers removed while offline release nothing; while joining, their unsubscriptions are
    /// queued for the send loop.
    @Test func releasesFollowTheConnection() throws {
        var machine = Machine.make()
        let filter = try TopicFilter("coaty/3/-/CHN:x/+")
        let id = machine.routing.makeID()
        _ = machine.routing.add(id, filter: filter, kind: .coaty, receiver: "x")
        let offline = machine.removeObservers([id], deferringUnsubscribe: false)
        #expect(offline.directRelease == nil && offline.wake == nil)

        _ = machine.start(abandon: token(1))
        let joiningID = machine.routing.makeID()
        _ = machine.routing.add(joiningID, filter: filter, kind: .coaty, receiver: "y")
        _ = machine.connected("c1")
        _ = machine.initialSubscriptionsSent()
        let joining = machine.removeObservers([joiningID], deferringUnsubscribe: true)
        #expect(joining.directRelease == nil)
        #expect(machine.session?.control.commands == [.unsubscribe(filter)])
    }

    /// Publications the send loop took go back to the front of the outbox when a send fails, and go
    /// out first on the next connection, without anything else waking the loop.
    @Test func publicationsOfAFailedSendAreRequeuedAndSentAfterTheReconnect() {
        var machine = Machine.online(outboxCapacity: 4)
        _ = machine.enqueue([message("m1"), message("m2"), message("m3")])
        #expect(machine.directPublishConnection == nil)
        guard case .batch(_, let messages, nil) = machine.takeBatch() else {
            Issue.record("no batch")
            return
        }
        #expect(messages.map(\.topic) == ["m1", "m2", "m3"])
        // The loop's publications are on their way: a new one is queued behind them.
        #expect(machine.directPublishConnection == nil)
        _ = machine.enqueue([message("m4")])
        // m1 went out, m2 failed with the connection.
        #expect(machine.requeue(Array(messages.dropFirst())) == [])
        _ = machine.connectionEnded(interrupt: token(2))
        _ = machine.backoffElapsed(abandon: token(3))
        _ = machine.connected("c2")
        _ = machine.initialSubscriptionsSent()
        _ = machine.joinSent()
        #expect(machine.park(token(4)) == false)
        guard case .batch(_, let resent, nil) = machine.takeBatch() else {
            Issue.record("the requeued publications were not taken after the reconnect")
            return
        }
        #expect(resent.map(\.topic) == ["m2", "m3", "m4"])
    }

    /// A requeue into a full outbox drops the oldest publications, to be reported.
    @Test func aRequeueIntoAFullOutboxDropsTheOldest() {
        var machine = Machine.online(outboxCapacity: 2)
        _ = machine.enqueue([message("m1"), message("m2")])
        _ = machine.takeBatch()
        _ = machine.enqueue([message("m3"), message("m4")])
        #expect(machine.requeue([publication("m1"), publication("m2")]).map(\.topic) == ["m1", "m2"])
        #expect(machine.outbox.elements.map(\.topic) == ["m3", "m4"])
    }

    /// The send loop parks only with nothing to do; a publication wakes it once.
    @Test func theSendLoopParksOnlyWhenIdleAndIsWokenOnce() {
        var machine = Machine.online()
        #expect(machine.directPublishConnection == "c1")
        #expect(machine.takeBatch() == .idle)
        #expect(machine.park(token(1)) == true)
        #expect(machine.enqueue([message("m1")]).wake == token(1))
        #expect(machine.enqueue([message("m2")]).wake == nil)
        #expect(machine.park(token(2)) == false)
        guard case .batch(_, let messages, nil) = machine.takeBatch() else {
            Issue.record("no batch")
            return
        }
        #expect(messages.map(\.topic) == ["m1", "m2"])
        machine.batchSent()
        #expect(machine.directPublishConnection == "c1")
    }

    /// Nothing is published directly before the agent is online, so the join goes out first.
    @Test func publicationsBeforeOnlineWaitInTheOutbox() {
        var machine = Machine.make()
        #expect(machine.enqueue([message("early")]).wake == nil)
        _ = machine.start(abandon: token(1))
        _ = machine.connected("c1")
        _ = machine.initialSubscriptionsSent()
        #expect(machine.takeBatch() == .finished)
        _ = machine.joinSent()
        #expect(machine.directPublishConnection == nil)
        guard case .batch(_, let messages, nil) = machine.takeBatch() else {
            Issue.record("no batch")
            return
        }
        #expect(messages.map(\.topic) == ["early"])
    }
}
