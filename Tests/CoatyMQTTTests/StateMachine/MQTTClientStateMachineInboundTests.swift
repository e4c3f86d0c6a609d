import CoatyCommunication
import CoatyCore
import CoatyMQTTPackets
import CoatyTransport
import Testing

@testable import CoatyMQTT

/// Packets from the broker in ``MQTTClientStateMachine``: deliveries, acknowledgements, requests and
/// protocol violations.
struct MQTTClientStateMachineInboundTests {
    typealias Driver = MachineDriver

    /// A QoS 1/2 message's acknowledgement is queued before the message is delivered, and the writer is
    /// woken once for the whole read.
    @Test func acknowledgementsAreQueuedBeforeDeliveryAndWakeTheWriterOnce() throws {
        var machine = Driver.connected()
        #expect(machine.writerWaits(Driver.token(1)).isWait)
        var qos1 = Driver.publication(.atLeastOnce, topic: "one")
        qos1.packetID = 5
        var qos2 = Driver.publication(.exactlyOnce, topic: "two")
        qos2.packetID = 6
        let actions = machine.received(
            [.publish(qos1), .publish(qos2), .publish(Driver.publication(.atMostOnce, topic: "zero"))],
            at: .seconds(3)
        )
        #expect(actions.deliveries.map(\.topic) == ["one", "two", "zero"])
        #expect(actions.wakeWriter == Driver.token(1))
        #expect(try Driver.written(by: &machine) == [.puback(5), .pubrec(6)])
        #expect(Driver.link(of: machine)?.lastReceived == .seconds(3))
    }

    /// A QoS 2 message the broker sends again before PUBREL is delivered once; PUBREL completes it.
    @Test func aQoS2DuplicateIsDeliveredOnce() throws {
        var machine = Driver.connected()
        var qos2 = Driver.publication(.exactlyOnce)
        qos2.packetID = 7
        #expect(machine.received([.publish(qos2)], at: .zero).deliveries.count == 1)
        qos2.dup = true
        #expect(machine.received([.publish(qos2)], at: .zero).deliveries.isEmpty)
        _ = machine.received([.pubrel(7)], at: .zero)
        #expect(try Driver.written(by: &machine) == [.pubrec(7), .pubrec(7), .pubcomp(7)])
        #expect(machine.received([.publish(qos2)], at: .zero).deliveries.count == 1)
    }

    @Test func aSubAckCompletesTheSubscriptionAndAFailureCodeRefusesIt() throws {
        var machine = Driver.connected()
        let filters = [try TopicFilter("a"), try TopicFilter("b")]
        #expect(machine.subscribe(to: filters, qos: .atLeastOnce, waiter: Driver.token(1)).isQueued)
        #expect(machine.subscribe(to: filters, qos: .atLeastOnce, waiter: Driver.token(2)).isQueued)
        let actions = machine.received(
            [
                .suback(.init(packetID: 1, returnCodes: [.granted(.atLeastOnce), .granted(.atMostOnce)])),
                .suback(.init(packetID: 2, returnCodes: [.granted(.atLeastOnce), .failure])),
            ],
            at: .zero
        )
        #expect(
            actions.resumptions.outcomes == [
                Driver.token(1): nil, Driver.token(2): TransportError.Code.subscriptionRefused,
            ]
        )
        #expect(actions.closure == nil)
    }

    @Test func requestsWithoutWaitersAreCompletedSilently() throws {
        var machine = Driver.connected()
        #expect(machine.subscribe(to: [try TopicFilter("a")], qos: .atMostOnce, waiter: nil).isQueued)
        #expect(machine.unsubscribe(from: [try TopicFilter("a")], waiter: nil).isQueued)
        let actions = machine.received(
            [.suback(.init(packetID: 1, returnCodes: [.failure])), .unsuback(2)],
            at: .zero
        )
        #expect(actions.resumptions.isEmpty)
        #expect(actions.closure == nil)
        #expect(Driver.link(of: machine)?.exchanges.isEmpty == true)
    }

    @Test func anUnsolicitedAcknowledgementIsIgnored() {
        var machine = Driver.connected()
        let actions = machine.received([.puback(9), .pubcomp(9), .pubrec(9), .unsuback(9)], at: .zero)
        #expect(actions.closure == nil)
        #expect(Driver.phaseName(of: machine) == "connected")
    }

    @Test(arguments: [
        ("PUBCOMP before PUBREC", MQTTQoS.exactlyOnce, MQTTPacket.pubcomp(1)),
        ("PUBACK for QoS 2", .exactlyOnce, .puback(1)),
        ("PUBREC for QoS 1", .atLeastOnce, .pubrec(1)),
        ("SUBACK for a PUBLISH", .atLeastOnce, .suback(.init(packetID: 1, returnCodes: [.granted(.atMostOnce)]))),
    ])
    func aWrongAcknowledgementIsAViolation(name: String, qos: MQTTQoS, acknowledgement: MQTTPacket) {
        var machine = Driver.connected()
        #expect(machine.publish(Driver.publication(qos), waiter: Driver.token(1)).isQueued)
        let actions = machine.received([acknowledgement], at: .zero)
        #expect(actions.closure?.failure.code == .protocolViolation)
        #expect(actions.closure?.resumptions.outcomes == [Driver.token(1): .protocolViolation])
        #expect(Driver.phaseName(of: machine) == "closed")
    }

    @Test func aSubAckWithTheWrongNumberOfCodesIsAViolation() throws {
        var machine = Driver.connected()
        #expect(machine.subscribe(to: [try TopicFilter("a")], qos: .atMostOnce, waiter: Driver.token(1)).isQueued)
        let actions = machine.received(
            [.suback(.init(packetID: 1, returnCodes: [.granted(.atMostOnce), .granted(.atMostOnce)]))],
            at: .zero
        )
        #expect(actions.closure?.failure.code == .protocolViolation)
    }

    @Test(arguments: [MQTTPacket.pingreq, .disconnect, .connack(.init(sessionPresent: false, returnCode: .accepted))])
    func aPacketOnlyAClientSendsIsAViolation(packet: MQTTPacket) {
        var machine = Driver.connected()
        #expect(machine.received([packet], at: .zero).closure?.failure.code == .protocolViolation)
    }

    @Test func aQoS1PublishWithoutIdentifierIsAViolation() {
        var machine = Driver.connected()
        #expect(machine.received([.publish(Driver.publication(.atLeastOnce))], at: .zero).closure != nil)
    }

    /// Packets before a violation in the same read are still handled.
    @Test func packetsBeforeAViolationAreHandled() {
        var machine = Driver.connected()
        #expect(machine.publish(Driver.publication(.atLeastOnce), waiter: Driver.token(1)).isQueued)
        let actions = machine.received(
            [.puback(1), .publish(Driver.publication(.atMostOnce, topic: "kept")), .pingreq],
            at: .zero
        )
        #expect(actions.resumptions.outcomes == [Driver.token(1): nil])
        #expect(actions.deliveries.map(\.topic) == ["kept"])
        #expect(actions.closure?.failure.code == .protocolViolation)
    }

    /// The reader learns after each read whether the outbound buffer is above the high-water mark.
    @Test func theReaderIsToldWhenTheBufferIsBacklogged() {
        var machine = Driver.connected()
        #expect(!machine.received([], at: .zero).isBacklogged)
        let large = Driver.publication(.atMostOnce, payload: Array(repeating: 7, count: 64 << 10))
        while machine.publishAtMostOnce(large).isQueued {}
        #expect(machine.received([], at: .zero).isBacklogged)
    }
}
