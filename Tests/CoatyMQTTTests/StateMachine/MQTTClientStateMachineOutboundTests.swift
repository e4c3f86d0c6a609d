import CoatyCommunication
import CoatyCore
import CoatyMQTTPackets
import CoatyTransport
import Testing

@testable import CoatyMQTT

/// Publications, requests, the in-flight window, backpressure and waiter cancellation in
/// ``MQTTClientStateMachine``.
struct MQTTClientStateMachineOutboundTests {
    typealias Driver = MachineDriver

    /// A packet queued while the writer waits names the writer once; later packets go into the same
    /// batch without waking it again.
    @Test func aQueuedPacketWakesAWaitingWriterOnce() throws {
        var machine = Driver.connected()
        #expect(machine.writerWaits(Driver.token(1)).isWait)
        #expect(machine.publishAtMostOnce(Driver.publication(.atMostOnce)).queuedWaking == .some(Driver.token(1)))
        #expect(machine.publishAtMostOnce(Driver.publication(.atMostOnce)).queuedWaking == .some(nil))
        #expect(try Driver.written(by: &machine).count == 2)
        #expect(machine.writerWaits(Driver.token(2)).isWait)
        var batch: [UInt8] = []
        #expect(machine.takeOutbound(swapping: &batch) == .idle)
    }

    /// While the writer is held, a request's SUBSCRIBE and its PUBLISH queue without waking it; the
    /// release wakes it once, and it takes both in one batch.
    @Test func aHeldWriterIsWokenOnceForEverythingQueuedDuringTheHold() throws {
        var machine = Driver.connected()
        #expect(machine.writerWaits(Driver.token(1)).isWait)
        machine.holdWriter()
        #expect(
            machine.subscribe(to: [try TopicFilter("a/+")], qos: .atMostOnce, waiter: nil).queuedWaking == .some(nil)
        )
        #expect(machine.publishAtMostOnce(Driver.publication(.atMostOnce)).queuedWaking == .some(nil))
        #expect(machine.releaseWriter() == Driver.token(1))
        let packets = try Driver.written(by: &machine)
        #expect(packets.count == 2)
        if case .subscribe = packets.first {} else { Issue.record("wrote \(packets)") }
        // Nested holds wake only at the last release; a hold with nothing queued wakes nobody.
        #expect(machine.writerWaits(Driver.token(2)).isWait)
        machine.holdWriter()
        machine.holdWriter()
        #expect(machine.publishAtMostOnce(Driver.publication(.atMostOnce)).queuedWaking == .some(nil))
        #expect(machine.releaseWriter() == nil)
        #expect(machine.releaseWriter() == Driver.token(2))
        _ = try Driver.written(by: &machine)
        #expect(machine.writerWaits(Driver.token(3)).isWait)
        machine.holdWriter()
        #expect(machine.releaseWriter() == nil)
    }

    /// A writer that finds nothing queued leaves its emptied batch's storage to the next packets
    /// queued (a direct send's batch lives for one send), unless a burst made the batch large.
    @Test func anIdleWriterLeavesItsEmptiedBatchToTheQueue() throws {
        var machine = Driver.connected()
        var batch: [UInt8] = []
        batch.reserveCapacity(4_096)
        let room = batch.capacity
        #expect(machine.takeOutbound(swapping: &batch) == .idle)
        #expect(Driver.link(of: machine)?.outbound.capacity == room)
        #expect(batch.capacity < room)
        // The next packet goes into that storage, and the writer takes it as usual.
        #expect(machine.publishAtMostOnce(Driver.publication(.atMostOnce)).queuedWaking == .some(nil))
        #expect(Driver.link(of: machine)?.outbound.capacity == room)
        #expect(try Driver.written(by: &machine).count == 1)
        // A batch above the kept size stays with the writer, to be let go.
        var large: [UInt8] = []
        large.reserveCapacity(MQTTClientStateMachine.largestKeptBatch + 1)
        let largeRoom = large.capacity
        #expect(machine.takeOutbound(swapping: &large) == .idle)
        #expect(large.capacity == largeRoom)
        #expect((Driver.link(of: machine)?.outbound.capacity ?? .max) < largeRoom)
    }

    /// The writer checks again before it waits: a packet queued since it looked means no wait.
    @Test func aWriterThatFindsPacketsQueuedDoesNotWait() {
        var machine = Driver.connected()
        var batch: [UInt8] = []
        #expect(machine.takeOutbound(swapping: &batch) == .idle)
        #expect(machine.publishAtMostOnce(Driver.publication(.atMostOnce)).queuedWaking == .some(nil))
        #expect(machine.writerWaits(Driver.token(1)).isReady)
    }

    @Test func aQoS1PublicationCompletesOnItsPubAck() throws {
        var machine = Driver.connected()
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(1)).isQueued)
        let packets = try Driver.written(by: &machine)
        guard case .publish(let sent) = packets.first else {
            Issue.record("wrote \(packets)")
            return
        }
        #expect(sent.packetID == 1)
        let actions = machine.received([.puback(1)], at: .seconds(1))
        #expect(actions.resumptions.outcomes == [Driver.token(1): nil])
        #expect(Driver.link(of: machine)?.exchanges.isEmpty == true)
        #expect(Driver.link(of: machine)?.publishesInFlight == 0)
    }

    @Test func aQoS2PublicationCompletesOnPubRecAndPubComp() throws {
        var machine = Driver.connected()
        #expect(machine.publish(Driver.publication(.exactlyOnce), waiter: Driver.token(1)).isQueued)
        _ = try Driver.written(by: &machine)
        #expect(machine.writerWaits(Driver.token(2)).isWait)
        let pubrec = machine.received([.pubrec(1)], at: .zero)
        #expect(pubrec.resumptions.isEmpty)
        #expect(pubrec.wakeWriter == Driver.token(2))
        #expect(try Driver.written(by: &machine) == [.pubrel(1)])
        // A duplicate PUBREC gets the PUBREL again.
        _ = machine.received([.pubrec(1)], at: .zero)
        #expect(try Driver.written(by: &machine) == [.pubrel(1)])
        #expect(machine.received([.pubcomp(1)], at: .zero).resumptions.outcomes == [Driver.token(1): nil])
    }

    /// The in-flight window: publications beyond it wait in order and start as slots free up.
    @Test func publicationsBeyondTheWindowStartInOrderAsSlotsFree() throws {
        var machine = Driver.connected(maximumInFlight: 2)
        for waiter in 1...2 {
            #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(UInt64(waiter))).isQueued)
        }
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(3)).isWaitingForWindow)
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(4)).isWaitingForWindow)
        #expect(try Driver.written(by: &machine).count == 2)
        let first = machine.received([.puback(1)], at: .zero)
        #expect(first.resumptions.outcomes == [Driver.token(1): nil])
        // The freed slot went to the third publication, which took identifier 3.
        guard case .publish(let third) = try Driver.written(by: &machine).first else {
            Issue.record("the third publication was not sent")
            return
        }
        #expect(third.packetID == 3)
        #expect(Driver.link(of: machine)?.exchanges[3]?.waiter == Driver.token(3))
        #expect(Driver.link(of: machine)?.window.map(\.waiter) == [Driver.token(4)])
    }

    /// A new publication does not overtake those waiting for the window, even when a slot is free.
    @Test func aNewPublicationQueuesBehindTheWindowQueue() {
        var machine = Driver.connected(maximumInFlight: 1)
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(1)).isQueued)
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(2)).isWaitingForWindow)
        _ = machine.received([.puback(1)], at: .zero)
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(3)).isWaitingForWindow)
        #expect(Driver.link(of: machine)?.exchanges.values.map(\.waiter) == [Driver.token(2)])
    }

    /// A publication cancelled while it waits for the window is dropped: it is never sent.
    @Test func aCancelledPublicationWaitingForTheWindowIsNeverSent() throws {
        var machine = Driver.connected(maximumInFlight: 1)
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(1)).isQueued)
        #expect(
            machine.publish(Driver.publication(.atLeastOnce, topic: "dropped"), waiter: Driver.token(2))
                .isWaitingForWindow
        )
        _ = try Driver.written(by: &machine)
        machine.cancel(Driver.token(2))
        let actions = machine.received([.puback(1)], at: .zero)
        #expect(actions.resumptions.outcomes == [Driver.token(1): nil])
        #expect(try Driver.written(by: &machine).isEmpty)
        #expect(Driver.link(of: machine)?.publishesInFlight == 0)
    }

    /// A publication cancelled once on the wire stays in flight without a waiter: its identifier is not
    /// reused until the broker acknowledges it, and the acknowledgement resumes nobody.
    @Test func aCancelledPublicationOnTheWireKeepsItsIdentifierUntilAcknowledged() throws {
        var machine = Driver.connected()
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(1)).isQueued)
        machine.cancel(Driver.token(1))
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(2)).isQueued)
        #expect(Driver.link(of: machine)?.exchanges[1]?.waiter == nil)
        #expect(Driver.link(of: machine)?.exchanges[2]?.waiter == Driver.token(2))
        #expect(machine.received([.puback(1)], at: .zero).resumptions.isEmpty)
        #expect(Driver.link(of: machine)?.publishesInFlight == 1)
    }

    /// A full outbound buffer refuses QoS 0 publications; the publisher's drain waiter is resumed when
    /// the writer takes the buffer.
    @Test func aFullBufferMakesPublishersWaitForTheWriter() throws {
        var machine = Driver.connected()
        let large = Driver.publication(.atMostOnce, payload: Array(repeating: 7, count: 64 << 10))
        while machine.publishAtMostOnce(large).isQueued {}
        #expect(Driver.queuedBytes(in: machine) >= MQTTClientStateMachine.outboundHighWater)
        #expect(machine.publishAtMostOnce(large).isFull)
        #expect(machine.subscribe(to: [try TopicFilter("a")], qos: .atMostOnce, waiter: nil).isFull)
        #expect(machine.unsubscribe(from: [try TopicFilter("a")], waiter: nil).isFull)
        // A request whose task waits is queued all the same.
        #expect(machine.subscribe(to: [try TopicFilter("a")], qos: .atMostOnce, waiter: Driver.token(9)).isQueued)
        #expect(machine.waitForDrain(Driver.token(1)).isWait)
        #expect(machine.waitForDrain(Driver.token(2)).isWait)
        var batch: [UInt8] = []
        #expect(machine.takeOutbound(swapping: &batch) == .write(drained: [Driver.token(1), Driver.token(2)]))
        #expect(machine.waitForDrain(Driver.token(3)).isReady)
    }

    /// A drain waiter cancelled before the writer drains is not resumed by the drain.
    @Test func aCancelledDrainWaiterIsForgotten() {
        var machine = Driver.connected()
        let large = Driver.publication(.atMostOnce, payload: Array(repeating: 7, count: 64 << 10))
        while machine.publishAtMostOnce(large).isQueued {}
        #expect(machine.waitForDrain(Driver.token(1)).isWait)
        #expect(machine.waitForDrain(Driver.token(2)).isWait)
        machine.cancel(Driver.token(1))
        var batch: [UInt8] = []
        #expect(machine.takeOutbound(swapping: &batch) == .write(drained: [Driver.token(2)]))
    }

    /// A cancelled writer is not woken by the next packet.
    @Test func aCancelledWriterIsNotWoken() {
        var machine = Driver.connected()
        #expect(machine.writerWaits(Driver.token(1)).isWait)
        machine.cancel(Driver.token(1))
        #expect(machine.publishAtMostOnce(Driver.publication(.atMostOnce)).queuedWaking == .some(nil))
    }

    @Test func packetIdentifiersSkipThoseInUseAndZeroOnWrap() throws {
        var machine = Driver.connected()
        #expect(machine.subscribe(to: [try TopicFilter("a")], qos: .atMostOnce, waiter: Driver.token(1)).isQueued)
        var link = try #require(Driver.link(of: machine))
        link.lastPacketID = UInt16.max - 1
        link.exchanges[UInt16.max] = .init(stage: .awaitingUnsubAck, waiter: nil, sequence: 0)
        #expect(link.allocatePacketID() == 2)  // skips 65,535 (in use), 0 and 1 (in use)
        #expect(link.allocatePacketID() == 3)
    }

    @Test func anUnencodablePublicationFailsWithInvalidArgumentAndLeavesNothingQueued() {
        var machine = Driver.connected()
        let tooLong = Driver.publication(.atLeastOnce, topic: String(repeating: "a", count: 70_000))
        #expect(machine.publish(tooLong, waiter: Driver.token(1)).failureCode == .invalidArgument)
        #expect(machine.publishAtMostOnce(tooLong).failureCode == .invalidArgument)
        #expect(Driver.queuedBytes(in: machine) == 0)
        #expect(Driver.link(of: machine)?.exchanges.isEmpty == true)
    }
}
