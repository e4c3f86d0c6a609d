import CoatyCore
import CoatyTransport
import Testing

@testable import CoatyCommunication

/// The outbox of ``ManagerStateMachine``: no drop while online (backpressure), its bound and its
/// drops while offline, one slot per publication, and the withdrawal of given-up requests.
struct ManagerOutboxTests {
    typealias Machine = ManagerStateMachine<String, String>

    /// Online, a full outbox parks a waiting publisher until the send loop takes the outbox, refuses
    /// one that cannot wait, and drops nothing.
    @Test func aFullOutboxOnlineParksOrRefusesAndDropsNothing() {
        var machine = Machine.online(outboxCapacity: 2)
        #expect(machine.enqueue(publication("m1"), whenFull: .refuse).outcome == .queued)
        #expect(machine.enqueue(publication("m2"), whenFull: .refuse).outcome == .queued)
        #expect(machine.enqueue(publication("m3"), whenFull: .refuse) == .init(outcome: .refused))
        #expect(machine.enqueue(publication("m3"), whenFull: .wait(token(7))) == .init(outcome: .waiting))
        #expect(machine.outbox.elements.map(\.topic) == ["m1", "m2"])
        guard case .batch(_, let publications, nil) = machine.takeBatch() else {
            Issue.record("no batch")
            return
        }
        #expect(publications.map(\.topic) == ["m1", "m2"])
        #expect(machine.takeRoomWaiters() == [token(7)])
        #expect(machine.enqueue(publication("m3"), whenFull: .wait(token(8))).outcome == .queued)
        #expect(machine.takeRoomWaiters() == [])
    }

    /// Requests and responses go beyond the bound while online instead of waiting or being dropped.
    @Test func requestsExceedTheBoundOnline() {
        var machine = Machine.online(outboxCapacity: 1)
        _ = machine.enqueue(publication("m1"), whenFull: .refuse)
        let enqueued = machine.enqueue(publication("request"), whenFull: .exceed)
        #expect(enqueued.outcome == .queued && enqueued.dropped == nil)
        #expect(machine.outbox.elements.map(\.topic) == ["m1", "request"])
    }

    /// Offline the outbox keeps its bound: the oldest publication is dropped (to be reported),
    /// whatever the policy.
    @Test func offlineTheOldestIsDropped() {
        var machine = Machine.make(outboxCapacity: 2)
        for topic in ["m1", "m2"] { _ = machine.enqueue(publication(topic), whenFull: .wait(token(1))) }
        let enqueued = machine.enqueue(publication("m3"), whenFull: .wait(token(2)))
        #expect(enqueued.outcome == .queued)
        #expect(enqueued.dropped?.topic == "m1")
        #expect(machine.outbox.elements.map(\.topic) == ["m2", "m3"])
    }

    /// A publication on two topics (a custom-type Advertise) takes one slot.
    @Test func aPublicationOnTwoTopicsTakesOneSlot() {
        var machine = Machine.online(outboxCapacity: 2)
        let twoTopics = Publication([message("ADV:Object"), message("ADV::com.example.Light")])
        #expect(machine.enqueue(twoTopics, whenFull: .refuse).outcome == .queued)
        #expect(machine.enqueue(twoTopics, whenFull: .refuse).outcome == .queued)
        #expect(machine.enqueue(twoTopics, whenFull: .refuse).outcome == .refused)
    }

    /// Publishers parked by a full outbox are released when the connection ends; they then queue
    /// offline.
    @Test func parkedPublishersAreReleasedWhenTheConnectionEnds() {
        var machine = Machine.online(outboxCapacity: 1)
        _ = machine.enqueue(publication("m1"), whenFull: .refuse)
        #expect(machine.enqueue(publication("m2"), whenFull: .wait(token(5))).outcome == .waiting)
        guard case .reconnect(_, let releasing) = machine.connectionEnded(interrupt: token(6)) else {
            Issue.record("no reconnect")
            return
        }
        #expect(releasing.contains(token(5)))
        #expect(machine.enqueue(publication("m2"), whenFull: .wait(token(7))).dropped?.topic == "m1")
    }

    /// A request whose caller gave up (its response observers removed) is withdrawn from the outbox,
    /// and is not put back when a failed send requeues it.
    @Test func aGivenUpRequestIsWithdrawnAndNotRequeued() throws {
        var machine = Machine.make()
        let first = machine.registerRequest([try TopicFilter("coaty/3/-/RTN/+/a")], receiver: "a")
        let second = machine.registerRequest([try TopicFilter("coaty/3/-/RTN/+/b")], receiver: "b")
        _ = machine.enqueue(Publication([message("CLL:a")], request: first.ids[0]))
        _ = machine.enqueue(Publication([message("CLL:b")], request: second.ids[0]))
        _ = machine.enqueue(publication("ADV"))
        _ = machine.removeObservers(first.ids, deferringUnsubscribe: true)
        #expect(machine.outbox.elements.map(\.topic) == ["CLL:b", "ADV"])

        let taken = machine.takeOutbox()
        _ = machine.removeObservers(second.ids, deferringUnsubscribe: true)
        #expect(machine.requeue(taken) == [])
        #expect(machine.outbox.elements.map(\.topic) == ["ADV"])
    }
}
