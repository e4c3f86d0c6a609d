import CoatyCommunication
import CoatyCore
import CoatyMQTTPackets
import CoatyTransport
import Testing

@testable import CoatyMQTT

/// Closing in ``MQTTClientStateMachine``: DISCONNECT, the flush, losing the connection with work in
/// flight, and the persistent session.
struct MQTTClientStateMachineClosingTests {
    typealias Driver = MachineDriver

    /// Nothing is queued after DISCONNECT [MQTT-3.14.4-1]: acknowledgements and PINGREQs are dropped,
    /// new work fails, received messages are still delivered.
    @Test func nothingIsQueuedAfterDisconnect() throws {
        var machine = Driver.connected(keepAlive: .seconds(10))
        var qos1 = Driver.publication(.atLeastOnce)
        qos1.packetID = 1
        _ = machine.received([.publish(qos1)], at: .zero)
        #expect(machine.writerWaits(Driver.token(1)).isReady)
        #expect(machine.disconnect().isQueued)
        #expect(Driver.phaseName(of: machine) == "closing")
        qos1.packetID = 2
        var qos2 = Driver.publication(.exactlyOnce)
        qos2.packetID = 3
        let actions = machine.received([.publish(qos1), .publish(qos2), .pubrel(3)], at: .zero)
        #expect(actions.deliveries.count == 2)
        #expect(machine.keepAliveTick(at: .seconds(100)).isStop)
        #expect(machine.publishAtMostOnce(Driver.publication(.atMostOnce)).failureCode == .connectionClosed)
        #expect(
            machine.subscribe(to: [try TopicFilter("a")], qos: .atMostOnce, waiter: nil).failureCode
                == .connectionClosed
        )
        #expect(machine.disconnect().failureCode == .connectionClosed)
        #expect(try Driver.written(by: &machine) == [.puback(1), .disconnect])
    }

    /// The DISCONNECT wakes a waiting writer; a flush waiter is resumed once the write that carried the
    /// DISCONNECT finished.
    @Test func theFlushWaiterIsResumedWhenTheDisconnectIsWritten() {
        var machine = Driver.connected()
        #expect(machine.publishAtMostOnce(Driver.publication(.atMostOnce)).isQueued)
        var batch: [UInt8] = []
        guard case .write = machine.takeOutbound(swapping: &batch) else {
            Issue.record("nothing to write")
            return
        }
        // DISCONNECT queued while the first batch is being written.
        #expect(machine.disconnect().queuedWaking == .some(nil))
        #expect(machine.waitForFlush(Driver.token(1)).isWait)
        #expect(machine.written(at: .seconds(1)).isEmpty)  // the batch without the DISCONNECT
        batch = []
        #expect(machine.takeOutbound(swapping: &batch) == .write(drained: []))
        #expect(machine.written(at: .seconds(2)) == [Driver.token(1)])
    }

    /// The writer may write the DISCONNECT before the closing task starts waiting for it; the flush wait
    /// then does not wait (it used to wait the whole flush timeout).
    @Test func aFlushWaitAfterTheDisconnectWasWrittenDoesNotWait() {
        var machine = Driver.connected()
        #expect(machine.writerWaits(Driver.token(1)).isWait)
        #expect(machine.disconnect().queuedWaking == .some(Driver.token(1)))
        var batch: [UInt8] = []
        #expect(machine.takeOutbound(swapping: &batch) == .write(drained: []))
        #expect(machine.written(at: .zero).isEmpty)
        #expect(machine.waitForFlush(Driver.token(2)).isReady)
    }

    /// The reader waits for a full buffer to drain even while closing, since the DISCONNECT behind the
    /// backlog is still to be written; a publisher's drain wait fails instead.
    @Test func theReaderWaitsForTheDrainWhileClosing() {
        var machine = Driver.connected()
        let large = Driver.publication(.atMostOnce, payload: Array(repeating: 7, count: 64 << 10))
        while machine.publishAtMostOnce(large).isQueued {}
        #expect(machine.disconnect().isQueued)
        #expect(machine.waitForDrain(Driver.token(1)).failureCode == .connectionClosed)
        #expect(machine.waitForDrain(Driver.token(2), whileClosing: true).isWait)
        var batch: [UInt8] = []
        #expect(machine.takeOutbound(swapping: &batch) == .write(drained: [Driver.token(2)]))
        #expect(Driver.phaseName(of: machine) == "closing")
    }

    /// The broker closes the socket after DISCONNECT: the machine closes with `.connectionClosed`,
    /// whatever the I/O error said.
    @Test func aFailureWhileClosingIsAClose() {
        var machine = Driver.connected()
        #expect(machine.disconnect().isQueued)
        #expect(machine.waitForFlush(Driver.token(1)).isWait)
        let closure = machine.fail(TransportError(.connectionLost, "EOF"))
        #expect(closure?.failure.code == .connectionClosed)
        #expect(closure?.resumptions.outcomes == [Driver.token(1): nil])
    }

    /// The connection is lost with every kind of waiter registered: exchanges in flight, publications
    /// waiting for the window, drain waiters, the writer and close waiters. Each is resumed exactly
    /// once, and new work fails with the loss.
    @Test func losingTheConnectionResumesEveryWaiterOnce() throws {
        var machine = Driver.connected(maximumInFlight: 1)
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(1)).isQueued)
        #expect(machine.publish(Driver.publication(.exactlyOnce), waiter: Driver.token(2)).isWaitingForWindow)
        #expect(machine.subscribe(to: [try TopicFilter("a")], qos: .atMostOnce, waiter: Driver.token(3)).isQueued)
        #expect(machine.unsubscribe(from: [try TopicFilter("a")], waiter: Driver.token(4)).isQueued)
        let large = Driver.publication(.atMostOnce, payload: Array(repeating: 7, count: 64 << 10))
        while machine.publishAtMostOnce(large).isQueued {}
        #expect(machine.waitForDrain(Driver.token(5)).isWait)
        #expect(machine.waitUntilClosed(Driver.token(6)).isWait)
        var batch: [UInt8] = []
        _ = machine.takeOutbound(swapping: &batch)
        #expect(machine.writerWaits(Driver.token(7)).isWait)
        #expect(machine.waitForDrain(Driver.token(8)).isReady)

        let closure = machine.fail(TransportError(.connectionLost, "reset"))
        #expect(closure?.resumptions.count == 6)
        #expect(
            closure?.resumptions.outcomes == [
                Driver.token(1): .connectionLost, Driver.token(2): .connectionLost, Driver.token(3): .connectionLost,
                Driver.token(4): .connectionLost, Driver.token(6): nil, Driver.token(7): nil,
            ]
        )
        #expect(
            machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(9)).failureCode == .connectionLost
        )
        #expect(machine.fail(TransportError(.protocolViolation, "late")) == nil)
    }

    /// An acknowledgement, a cancellation or the writer's end can come after the close; they change
    /// nothing and resume nobody.
    @Test func eventsAfterTheCloseResumeNobody() {
        var machine = Driver.connected()
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(1)).isQueued)
        _ = machine.fail(TransportError(.connectionLost, "reset"))
        let actions = machine.received([.puback(1)], at: .zero)
        #expect(actions.resumptions.isEmpty)
        #expect(actions.closure == nil)
        machine.cancel(Driver.token(1))
        #expect(machine.written(at: .zero).isEmpty)
        #expect(machine.failure?.code == .connectionLost)
    }

    /// With a persistent session, a publication in flight when the connection is lost stays in the
    /// session: its waiter fails with an error caused by `MQTTPublicationKept`, and the session left
    /// holds the PUBLISH, and the PUBREL of a QoS 2 message past PUBREC, in the order first sent.
    @Test func aLostConnectionLeavesThePersistentSession() throws {
        var machine = Driver.connected(keepsSession: true, maximumInFlight: 2)
        #expect(machine.publish(Driver.publication(.exactlyOnce, topic: "two"), waiter: Driver.token(1)).isQueued)
        #expect(machine.publish(Driver.publication(.atLeastOnce, topic: "one"), waiter: Driver.token(2)).isQueued)
        #expect(
            machine.publish(Driver.publication(.atLeastOnce, topic: "window"), waiter: Driver.token(3))
                .isWaitingForWindow
        )
        var qos2 = Driver.publication(.exactlyOnce)
        qos2.packetID = 40
        _ = machine.received([.pubrec(1), .publish(qos2)], at: .zero)
        let failed = machine.fail(TransportError(.connectionLost, "reset"))
        let closure = try #require(failed)
        let kept = closure.resumptions.filter { $0.token != Driver.token(3) }
        #expect(kept.count == 2)
        for resumption in kept {
            guard case .failure(let error) = resumption.result else {
                Issue.record("a kept publication succeeded")
                continue
            }
            #expect(error.code == .connectionLost)
            #expect(error.underlying is MQTTPublicationKept)
        }
        #expect(closure.resumptions.outcomes[Driver.token(3)] == .connectionLost)
        var one = Driver.publication(.atLeastOnce, topic: "one")
        one.packetID = 2
        #expect(machine.sessionLeft.outbound == [.release(1), .publish(one)])
        #expect(machine.sessionLeft.receivedQoS2 == [40])
    }

    /// A resumed session sends its exchanges again first (PUBLISH with DUP and its identifier, PUBREL),
    /// they take window slots, and their acknowledgements resume nobody.
    @Test func aResumedSessionIsSentAgainFirst() throws {
        var machine = Driver.connected(keepsSession: true, maximumInFlight: 2)
        var one = Driver.publication(.atLeastOnce, topic: "one")
        one.packetID = 9
        machine.resumeSession(MQTTSessionState(outbound: [.release(4), .publish(one)], receivedQoS2: [7]))
        #expect(
            machine.publish(Driver.publication(.atLeastOnce, topic: "new"), waiter: Driver.token(1)).isWaitingForWindow
        )
        var dup = one
        dup.dup = true
        #expect(try Driver.written(by: &machine) == [.pubrel(4), .publish(dup)])
        #expect(machine.received([.pubcomp(4)], at: .zero).resumptions.isEmpty)
        guard case .publish(let new) = try Driver.written(by: &machine).first else {
            Issue.record("the new publication was not sent after the slot freed")
            return
        }
        #expect(new.packetID == 10)
        var qos2 = Driver.publication(.exactlyOnce)
        qos2.packetID = 7
        #expect(machine.received([.publish(qos2)], at: .zero).deliveries.isEmpty)
    }
}

extension MQTTClientStateMachine.KeepAliveAction {
    var isStop: Bool { if case .stop = self { true } else { false } }
}
