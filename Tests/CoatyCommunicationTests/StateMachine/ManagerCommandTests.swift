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
        #expect(removal.directRelease?.connection == "c1")
        #expect(removal.directRelease?.filters == [filter])
        // The second request with the same correlation id cannot subscribe directly meanwhile.
        let second = machine.registerRequest([filter], receiver: "second")
        #expect(second.queued == [filter])
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
            let release = try #require(removal.directRelease)
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
        let removal = machine.removeObservers(registration.ids, deferringUnsubscribe: true)
        #expect(removal.directRelease != nil)
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
