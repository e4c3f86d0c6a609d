import CoatyCore
import CoatyTransport
import Testing

@testable import CoatyCommunication

/// The lifecycle transitions of ``ManagerStateMachine``: connecting, joining, going online, losing the
/// connection, backing off and stopping, each window fed as events in the order the race would take.
struct ManagerLifecycleTests {
    typealias Machine = ManagerStateMachine<String, String>

    @Test func aConnectionGoesOnlineThroughSubscribingAndJoining() throws {
        var machine = Machine.make()
        let filter = try TopicFilter("coaty/3/-/ADV:Task/+")
        let id = machine.routing.makeID()
        _ = machine.routing.add(id, filter: filter, kind: .coaty, receiver: "early")
        #expect(machine.start(abandon: token(1)) == .connect)
        #expect(machine.phase == .connecting(.init(abandon: token(1), failureDelay: .seconds(1))))
        #expect(machine.connected("c1") == .subscribe([filter]))
        // An observation made while the first subscribe is out is picked up by the next one; it is
        // not queued, as nothing accepts commands yet.
        let late = try TopicFilter("coaty/3/-/CHN:late/+")
        _ = machine.routing.add(machine.routing.makeID(), filter: late, kind: .coaty, receiver: "late")
        #expect(machine.queueSubscription(late, waiter: token(2)) == .notConnected)
        #expect(machine.initialSubscriptionsSent() == .subscribe([late]))
        #expect(machine.initialSubscriptionsSent() == .join)
        #expect(machine.communicationState == .offline)
        #expect(machine.directPublishConnection == nil)
        #expect(machine.joinSent() == .online)
        #expect(machine.communicationState == .online)
        #expect(machine.directPublishConnection == "c1")
    }

    @Test func runIsRefusedWhileRunning() {
        var machine = Machine.online()
        #expect(machine.start(abandon: token(9)) == .alreadyRunning)
        #expect(machine.communicationState == .online)
    }

    /// `finish()` before `run()`: the next run ends at once, and the one after it connects.
    @Test func aStopBeforeRunEndsTheNextRunAtOnce() {
        var machine = Machine.make()
        #expect(machine.stopRequested() == .none)
        #expect(machine.phase == .idle(stopRequested: true))
        #expect(machine.start(abandon: token(1)) == .endRun)
        _ = machine.runEnded()
        #expect(machine.phase == .idle(stopRequested: false))
        #expect(machine.start(abandon: token(2)) == .connect)
    }

    /// A stop while the transport connects abandons the attempt at once; a connection that opens
    /// anyway is given up, and the run ends instead of backing off.
    @Test func aStopWhileConnectingAbandonsTheAttempt() {
        var machine = Machine.make()
        _ = machine.start(abandon: token(1))
        #expect(machine.stopRequested() == .abandonAttempt(token(1), releasing: []))
        #expect(machine.connected("c1") == .abandon)
        #expect(machine.connectionEnded(interrupt: token(2)) == .endRun)
        #expect(machine.stopRequested() == .none)
    }

    /// A stop while the initial subscriptions go out abandons the attempt too.
    @Test func aStopWhileSubscribingAbandonsTheAttempt() {
        var machine = Machine.make()
        _ = machine.start(abandon: token(1))
        _ = machine.connected("c1")
        #expect(machine.stopRequested() == .abandonAttempt(token(1), releasing: []))
        #expect(machine.initialSubscriptionsSent() == .abandon)
    }

    /// The stop meets the connection coming online, stop first: the join is out, but the agent never
    /// goes online; the attempt is abandoned (its last will undoes the join) and the observation
    /// queued meanwhile is released.
    @Test func aStopJustBeforeTheJoinIsOutAbandonsTheConnection() throws {
        var machine = Machine.make()
        _ = machine.start(abandon: token(1))
        _ = machine.connected("c1")
        #expect(machine.initialSubscriptionsSent() == .join)
        let filter = try TopicFilter("coaty/3/-/CHN:x/+")
        #expect(machine.queueSubscription(filter, waiter: token(5)) == .queued(wake: nil))
        #expect(machine.stopRequested() == .abandonAttempt(token(1), releasing: [token(5)]))
        #expect(machine.joinSent() == .abandon)
        #expect(machine.communicationState == .offline)
    }

    /// The same window, online first: the stop is graceful. Nothing abandons the connection; the send
    /// loop takes a final batch with what is queued, and publications made after it wait to be reported.
    @Test func aStopJustAfterTheJoinIsOutStopsGracefully() throws {
        var machine = Machine.make()
        _ = machine.start(abandon: token(1))
        _ = machine.connected("c1")
        _ = machine.initialSubscriptionsSent()
        #expect(machine.joinSent() == .online)
        _ = machine.enqueue([message("queued")])
        #expect(machine.stopRequested() == .drain(wake: nil))
        #expect(machine.communicationState == .online)
        guard case .batch(let commands, let messages, let final) = machine.takeBatch() else {
            Issue.record("no final batch")
            return
        }
        #expect(commands.isEmpty)
        #expect(messages.map(\.topic) == ["queued"])
        #expect(final == [])
        #expect(machine.phase == .stopping(.unjoining))
        #expect(machine.directPublishConnection == nil)
        _ = machine.enqueue([message("late")])
        #expect(machine.connectionEnded(interrupt: token(2)) == .endRun)
        #expect(machine.runEnded().unsent.map(\.topic) == ["late"])
        #expect(machine.communicationState == .offline)
    }

    /// A stop while the send loop is parked wakes it for the final batch.
    @Test func aStopWhileOnlineWakesTheParkedSendLoop() {
        var machine = Machine.online()
        #expect(machine.takeBatch() == .idle)
        #expect(machine.park(token(7)) == true)
        #expect(machine.stopRequested() == .drain(wake: token(7)))
        #expect(machine.park(token(8)) == false)
        guard case .batch(_, _, let final) = machine.takeBatch() else {
            Issue.record("no final batch")
            return
        }
        #expect(final == [])
    }

    @Test func aStopDuringTheBackoffInterruptsIt() {
        var machine = Machine.online()
        #expect(machine.connectionEnded(interrupt: token(9)) == .reconnect(after: .seconds(1), releasing: []))
        #expect(machine.stopRequested() == .interruptBackoff(token(9)))
        #expect(machine.backoffElapsed(abandon: token(10)) == .endRun)
    }

    /// The backoff doubles with each attempt that fails before it is online, up to the maximum, and
    /// starts over after a connection that got online.
    @Test func theBackoffDoublesUpToTheMaximumAndStartsOverAfterOnline() {
        var machine = Machine.make()
        _ = machine.start(abandon: token(1))
        var delays: [Duration] = []
        for attempt: UInt64 in 0..<5 {
            guard case .reconnect(let delay, _) = machine.connectionEnded(interrupt: token(100 + attempt)) else {
                Issue.record("no reconnect")
                return
            }
            delays.append(delay)
            #expect(machine.backoffElapsed(abandon: token(200 + attempt)) == .connect)
        }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8)])
        _ = machine.connected("c2")
        _ = machine.initialSubscriptionsSent()
        _ = machine.joinSent()
        #expect(machine.connectionEnded(interrupt: token(300)) == .reconnect(after: .seconds(1), releasing: []))
        _ = machine.backoffElapsed(abandon: token(301))
        #expect(machine.connectionEnded(interrupt: token(302)) == .reconnect(after: .seconds(2), releasing: []))
    }

    /// The connection is lost with commands in flight: the observation queued for the send loop, the
    /// one waiting for another's direct subscription, and the parked loop are all released, and the
    /// next connection subscribes every observed filter again.
    @Test func aLostConnectionReleasesTheWaitersOfItsCommands() throws {
        var machine = Machine.online()
        let queued = try TopicFilter("coaty/3/-/CHN:queued/+")
        let direct = try TopicFilter("coaty/3/-/CHN:direct/+")
        _ = machine.routing.add(machine.routing.makeID(), filter: direct, kind: .coaty, receiver: "first")
        guard case .claimed("c1", let claim?) = machine.claimDirectSubscription(of: direct, forResponses: false) else {
            Issue.record("the direct subscription was not claimed")
            return
        }
        _ = machine.routing.add(machine.routing.makeID(), filter: direct, kind: .coaty, receiver: "second")
        #expect(machine.waitForPendingSubscription(of: direct, waiter: token(21)) == true)
        _ = machine.routing.add(machine.routing.makeID(), filter: queued, kind: .coaty, receiver: "queued")
        #expect(machine.queueSubscription(queued, waiter: token(20)) == .queued(wake: nil))
        #expect(machine.takeBatch() != .idle)
        machine.batchCommandsDone()
        machine.batchSent()
        #expect(machine.park(token(22)) == true)

        guard case .reconnect(_, let releasing) = machine.connectionEnded(interrupt: token(23)) else {
            Issue.record("no reconnect")
            return
        }
        #expect(Set(releasing) == [token(21), token(22)])
        #expect(machine.communicationState == .offline)
        // The first observation's subscription ends on the lost connection after the reconnect: it
        // finds nothing of its own to end, and leaves the new connection's claim alone.
        #expect(machine.backoffElapsed(abandon: token(24)) == .connect)
        guard case .subscribe(let filters) = machine.connected("c2") else {
            Issue.record("no initial subscribe")
            return
        }
        #expect(filters.contains(direct) && filters.contains(queued))
        _ = machine.initialSubscriptionsSent()
        _ = machine.joinSent()
        #expect(machine.subscriptionEnded(direct, claim: claim) == [])
    }

    /// The queued command of the lost connection: released at the disconnect, not at the next connect.
    @Test func aQueuedSubscriptionIsReleasedWhenTheConnectionEnds() throws {
        var machine = Machine.online()
        let filter = try TopicFilter("coaty/3/-/CHN:x/+")
        _ = machine.routing.add(machine.routing.makeID(), filter: filter, kind: .coaty, receiver: "x")
        #expect(machine.takeBatch() == .idle)
        #expect(machine.park(token(3)) == true)
        #expect(machine.queueSubscription(filter, waiter: token(4)) == .queued(wake: token(3)))
        #expect(machine.connectionEnded(interrupt: token(5)) == .reconnect(after: .seconds(1), releasing: [token(4)]))
        #expect(machine.hasQueuedSubscription == false)
    }

    /// `run()` ends from any phase with nothing left behind: every waiter, observer and unsent
    /// publication is handed back.
    @Test func theEndOfARunHandsBackEverything() throws {
        var machine = Machine.online()
        let filter = try TopicFilter("coaty/3/-/CHN:x/+")
        _ = machine.routing.add(machine.routing.makeID(), filter: filter, kind: .coaty, receiver: "x")
        _ = machine.queueSubscription(filter, waiter: token(4))
        _ = machine.enqueue([message("unsent")])
        let end = machine.runEnded()
        #expect(end.waiters == [token(4)])
        #expect(end.entries.map(\.receiver) == ["x"])
        #expect(end.unsent.map(\.topic) == ["unsent"])
        #expect(machine.phase == .idle(stopRequested: false))
        #expect(machine.routing.entries.isEmpty)
    }
}

func token(_ value: UInt64) -> WaiterToken { WaiterToken(rawValue: value) }

func message(_ topic: String) -> TransportMessage { TransportMessage(topic: topic, payload: []) }

func publication(_ topic: String) -> Publication { Publication([message(topic)]) }

extension Publication {
    /// The topics of its messages, for comparing with the expected ones.
    var topic: String { self.messages.map(\.topic).joined(separator: " ") }
}

extension ManagerStateMachine where Connection == String, Receiver == String {
    /// Queues each message as a publication of its own; returns the send loop to wake, if any.
    mutating func enqueue(_ messages: [TransportMessage]) -> Enqueued {
        var result = Enqueued(outcome: .queued)
        for message in messages {
            let enqueued = self.enqueue(Publication([message]))
            result.wake = result.wake ?? enqueued.wake
        }
        return result
    }

    /// An idle machine: backoff from 1 s to 8 s, outbox of 4.
    static func make(outboxCapacity: Int = 4) -> Self {
        Self(outboxCapacity: outboxCapacity, initialReconnectDelay: .seconds(1), maximumReconnectDelay: .seconds(8))
    }

    /// A machine online on connection `"c1"`.
    static func online(outboxCapacity: Int = 4) -> Self {
        var machine = Self.make(outboxCapacity: outboxCapacity)
        _ = machine.start(abandon: token(1))
        _ = machine.connected("c1")
        _ = machine.initialSubscriptionsSent()
        _ = machine.joinSent()
        return machine
    }
}
