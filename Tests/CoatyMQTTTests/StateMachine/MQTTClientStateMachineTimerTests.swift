import CoatyCommunication
import CoatyCore
import CoatyMQTTPackets
import CoatyTransport
import Testing

@testable import CoatyMQTT

/// Keep-alive and the acknowledgement watchdog in ``MQTTClientStateMachine``, driven by explicit times.
struct MQTTClientStateMachineTimerTests {
    typealias Driver = MachineDriver

    @Test func anIdleConnectionPingsAfterHalfAKeepAliveAndFailsWithoutAnAnswer() throws {
        var machine = Driver.connected(keepAlive: .seconds(10))
        #expect(machine.keepAliveTick(at: .seconds(1)).sleepDeadline == .seconds(5))
        #expect(machine.writerWaits(Driver.token(1)).isWait)
        guard case .ping(let writer) = machine.keepAliveTick(at: .seconds(5)) else {
            Issue.record("no PINGREQ after half the keep-alive")
            return
        }
        #expect(writer == Driver.token(1))
        #expect(try Driver.written(by: &machine) == [.pingreq])
        _ = machine.written(at: .seconds(5))
        // Waits for the answer until a whole keep-alive after the last packet received.
        #expect(machine.keepAliveTick(at: .seconds(6)).sleepDeadline == .seconds(10))
        guard case .close(let closure) = machine.keepAliveTick(at: .seconds(10)) else {
            Issue.record("no close at the PINGRESP deadline")
            return
        }
        #expect(closure.failure.code == .connectionLost)
        #expect(closure.failure.message.contains("PINGRESP"))
        #expect(machine.keepAliveTick(at: .seconds(11)).isStop)
    }

    @Test func aPingRespEndsTheWaitAndTheNextPingFollowsHalfAKeepAliveLater() throws {
        var machine = Driver.connected(keepAlive: .seconds(10))
        guard case .ping = machine.keepAliveTick(at: .seconds(5)) else {
            Issue.record("no PINGREQ")
            return
        }
        _ = try Driver.written(by: &machine)
        _ = machine.written(at: .seconds(5))
        _ = machine.received([.pingresp], at: .seconds(6))
        #expect(machine.keepAliveTick(at: .seconds(6)).sleepDeadline == .seconds(10))
        #expect(Driver.phaseName(of: machine) == "connected")
    }

    /// Traffic in both directions postpones the PINGREQ; traffic in one direction only does not.
    @Test func trafficInBothDirectionsPostponesThePing() {
        var machine = Driver.connected(keepAlive: .seconds(10))
        _ = machine.written(at: .seconds(4))
        #expect(machine.keepAliveTick(at: .seconds(4)).sleepDeadline == .seconds(5))
        _ = machine.received([.pingresp], at: .seconds(4))
        #expect(machine.keepAliveTick(at: .seconds(5)).sleepDeadline == .seconds(9))
    }

    /// Bytes of a packet that never completes are not a sign of life: only whole packets count.
    @Test func aReadWithoutAWholePacketDoesNotCount() {
        var machine = Driver.connected(keepAlive: .seconds(10))
        guard case .ping = machine.keepAliveTick(at: .seconds(5)) else {
            Issue.record("no PINGREQ")
            return
        }
        _ = machine.received([], at: .seconds(9))
        guard case .close = machine.keepAliveTick(at: .seconds(10)) else {
            Issue.record("a partial packet kept the connection alive")
            return
        }
    }

    @Test func keepAliveZeroIsOff() {
        var machine = Driver.connected(keepAlive: .zero)
        #expect(machine.keepAliveTick(at: .seconds(1000)).isStop)
    }

    /// An exchange still unacknowledged two looks after it was first seen (at least a whole timeout) closes the
    /// connection; one acknowledged in time does not.
    @Test func theWatchdogClosesOnAnExchangeUnacknowledgedForTwoLooks() throws {
        var machine = Driver.connected(acknowledgementTimeout: .seconds(2))
        #expect(machine.subscribe(to: [try TopicFilter("a")], qos: .atMostOnce, waiter: Driver.token(1)).isQueued)
        #expect(machine.acknowledgementCheck().isKeepWatching)  // first look: it is new
        #expect(machine.subscribe(to: [try TopicFilter("b")], qos: .atMostOnce, waiter: Driver.token(2)).isQueued)
        #expect(machine.acknowledgementCheck().isKeepWatching)
        _ = machine.received([.suback(.init(packetID: 2, returnCodes: [.granted(.atMostOnce)]))], at: .zero)
        guard case .close(let closure) = machine.acknowledgementCheck() else {
            Issue.record("the overdue SUBSCRIBE did not close the connection")
            return
        }
        #expect(closure.failure.code == .connectionLost)
        #expect(closure.failure.message.contains("SUBACK for packet 1"))
        #expect(closure.resumptions.outcomes == [Driver.token(1): .connectionLost])
        #expect(machine.acknowledgementCheck().isStop)
    }

    @Test func exchangesAcknowledgedBetweenLooksKeepTheConnection() {
        var machine = Driver.connected(acknowledgementTimeout: .seconds(2))
        for round in 1...10 {
            let waiter = Driver.token(UInt64(round))
            #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: waiter).isQueued)
            #expect(machine.acknowledgementCheck().isKeepWatching)
            let id = Driver.link(of: machine)?.exchanges.keys.first ?? 0
            #expect(machine.received([.puback(id)], at: .zero).resumptions.outcomes == [waiter: nil])
        }
        #expect(machine.acknowledgementCheck().isKeepWatching)
    }

    /// A publication that waited for the window is timed from when it is sent, not from when its task
    /// asked to publish.
    @Test func timeInTheWindowQueueDoesNotCountAsUnacknowledged() {
        var machine = Driver.connected(maximumInFlight: 1, acknowledgementTimeout: .seconds(2))
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(1)).isQueued)
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(2)).isWaitingForWindow)
        #expect(machine.acknowledgementCheck().isKeepWatching)
        #expect(machine.acknowledgementCheck().isKeepWatching)
        _ = machine.received([.puback(1)], at: .zero)  // the second one is sent now
        #expect(machine.acknowledgementCheck().isKeepWatching)
        #expect(machine.acknowledgementCheck().isKeepWatching)
        guard case .close = machine.acknowledgementCheck() else {
            Issue.record("the second publication was never found overdue")
            return
        }
    }
}

extension MQTTClientStateMachine.KeepAliveAction {
    var sleepDeadline: Duration? { if case .sleep(let deadline) = self { deadline } else { nil } }
}

extension MQTTClientStateMachine.WatchdogAction {
    var isKeepWatching: Bool { if case .keepWatching = self { true } else { false } }
    var isStop: Bool { if case .stop = self { true } else { false } }
}
