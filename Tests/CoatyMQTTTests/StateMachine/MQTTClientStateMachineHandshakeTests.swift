import CoatyCommunication
import CoatyCore
import CoatyMQTTPackets
import CoatyTransport
import Testing

@testable import CoatyMQTT

/// The handshake phase of ``MQTTClientStateMachine``: CONNACK, refusals, and closing before it.
struct MQTTClientStateMachineHandshakeTests {
    typealias Driver = MachineDriver

    @Test func anAcceptedConnAckConnectsWithItsSessionFlag() {
        var machine = MQTTClientStateMachine(broker: Driver.broker)
        #expect(Driver.phaseName(of: machine) == "handshaking")
        machine.connectWritten(at: .seconds(1))
        let action = machine.handshakeReceived(
            .connack(.init(sessionPresent: true, returnCode: .accepted)),
            at: .seconds(2)
        )
        guard case .accepted(let sessionPresent) = action else {
            Issue.record("not accepted: \(action)")
            return
        }
        #expect(sessionPresent)
        #expect(Driver.phaseName(of: machine) == "connected")
        #expect(Driver.link(of: machine)?.lastSent == .seconds(1))
        #expect(Driver.link(of: machine)?.lastReceived == .seconds(2))
    }

    @Test func aRefusedConnAckClosesWithConnectionRefused() {
        var machine = MQTTClientStateMachine(broker: Driver.broker)
        #expect(machine.waitUntilClosed(Driver.token(1)).isWait)
        let action = machine.handshakeReceived(
            .connack(.init(sessionPresent: false, returnCode: .notAuthorized)),
            at: .zero
        )
        guard case .failed(let closure) = action else {
            Issue.record("not refused: \(action)")
            return
        }
        #expect(closure.failure.code == .connectionRefused)
        #expect(closure.resumptions.outcomes == [Driver.token(1): nil])
        #expect(machine.failure?.code == .connectionRefused)
    }

    @Test func aPacketOtherThanConnAckFirstIsAViolation() {
        var machine = MQTTClientStateMachine(broker: Driver.broker)
        guard case .failed(let closure) = machine.handshakeReceived(.pingresp, at: .zero) else {
            Issue.record("accepted a PINGRESP as CONNACK")
            return
        }
        #expect(closure.failure.code == .protocolViolation)
        #expect(Driver.phaseName(of: machine) == "closed")
    }

    /// Nothing may be queued before the CONNACK: the connection is not handed out yet.
    @Test func publicationsAndRequestsFailDuringTheHandshake() throws {
        var machine = MQTTClientStateMachine(broker: Driver.broker)
        #expect(machine.publishAtMostOnce(Driver.publication(.atMostOnce)).failureCode == .connectionClosed)
        #expect(
            machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(1)).failureCode == .connectionClosed
        )
        #expect(
            machine.subscribe(to: [try TopicFilter("a")], qos: .atMostOnce, waiter: nil).failureCode
                == .connectionClosed
        )
        #expect(machine.disconnect().failureCode == .connectionClosed)
        #expect(machine.waitForDrain(Driver.token(2)).failureCode == .connectionClosed)
        #expect(Driver.phaseName(of: machine) == "handshaking")
    }

    /// Closed while connecting (the connect timeout, or cancellation): the machine closes at once,
    /// wakes whoever waits for the close, and a CONNACK that still arrives does not connect it.
    @Test func closingWhileConnectingEndsTheHandshake() {
        var machine = MQTTClientStateMachine(broker: Driver.broker)
        machine.connectWritten(at: .zero)
        #expect(machine.waitUntilClosed(Driver.token(1)).isWait)
        #expect(machine.waitUntilClosed(Driver.token(2)).isWait)
        machine.cancel(Driver.token(2))
        let closure = machine.fail(TransportError(.timedOut, "no CONNACK"))
        #expect(closure?.failure.code == .timedOut)
        #expect(closure?.resumptions.outcomes == [Driver.token(1): nil])
        #expect(machine.fail(TransportError(.connectionLost, "again")) == nil)
        guard case .failed(let late) = machine.handshakeReceived(Driver.connack, at: .zero) else {
            Issue.record("a CONNACK after the close connected the machine")
            return
        }
        #expect(late.failure.code == .timedOut)
        #expect(late.resumptions.isEmpty)
        #expect(machine.waitUntilClosed(Driver.token(3)).isReady)
        #expect(machine.sessionLeft.isEmpty)
    }

    /// The closed phase keeps the first failure and refuses everything with it.
    @Test func aClosedMachineRefusesEverythingWithItsFailure() throws {
        var machine = Driver.connected()
        _ = machine.fail(TransportError(.connectionLost, "gone"))
        #expect(machine.publishAtMostOnce(Driver.publication(.atMostOnce)).failureCode == .connectionLost)
        #expect(
            machine.publish(Driver.publication(.exactlyOnce), waiter: Driver.token(1)).failureCode == .connectionLost
        )
        #expect(
            machine.unsubscribe(from: [try TopicFilter("a")], waiter: Driver.token(2)).failureCode == .connectionLost
        )
        #expect(machine.waitForDrain(Driver.token(3), whileClosing: true).failureCode == .connectionLost)
        #expect(machine.waitForFlush(Driver.token(4)).isReady)
        #expect(machine.writerWaits(Driver.token(5)).isReady)
        var batch: [UInt8] = []
        #expect(machine.takeOutbound(swapping: &batch) == .stop)
        let actions = machine.received([.publish(Driver.publication(.atMostOnce))], at: .zero)
        #expect(actions.deliveries.isEmpty)
    }
}
