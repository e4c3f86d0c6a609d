import CoatyCommunication
import CoatyMQTTPackets
import CoatyTransport
import Testing

@testable import CoatyMQTT

/// The client's connection state queues nothing after DISCONNECT [MQTT-3.14.4-1].
struct MQTTConnectionStateTests {
    @Test func nothingIsQueuedAfterDisconnect() throws {
        var state = MQTTConnectionState(now: .now, keepsSession: false)
        state.enqueueControl(.puback(1))
        state.enqueueControl(.disconnect)
        state.isDisconnecting = true
        let queued = state.outbound
        #expect(try Self.packets(in: queued) == [.puback(1), .disconnect])
        // An acknowledgement, a PINGREQ and a publication that come later are not sent.
        state.enqueueControl(.pubrec(2))
        state.enqueueControl(.pingreq)
        try state.enqueue(.publish(.init(topic: "t", payload: [1])))
        #expect(state.outbound == queued)
        #expect(state.unusable?.code == .connectionClosed)
    }

    private static func packets(in bytes: [UInt8]) throws -> [MQTTPacket] {
        var decoder = MQTTPacketDecoder()
        decoder.append(bytes)
        var packets: [MQTTPacket] = []
        while let packet = try decoder.next() { packets.append(packet) }
        return packets
    }
}
