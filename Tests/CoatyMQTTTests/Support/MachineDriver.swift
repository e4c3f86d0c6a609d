import CoatyCommunication
import CoatyCore
import CoatyMQTTPackets
import CoatyTransport
import Testing

@testable import CoatyMQTT

/// Helpers for driving an ``MQTTClientStateMachine`` event by event in tests.
enum MachineDriver {
    typealias Machine = MQTTClientStateMachine

    static let broker = MQTTBrokerAddress(host: "test")

    /// A machine whose CONNACK accepted it at time zero.
    static func connected(
        keepsSession: Bool = false,
        maximumInFlight: Int = 64,
        keepAlive: Duration = .zero,
        acknowledgementTimeout: Duration? = nil
    ) -> Machine {
        var machine = Machine(
            broker: Self.broker,
            keepsSession: keepsSession,
            maximumInFlight: maximumInFlight,
            keepAlive: keepAlive,
            acknowledgementTimeout: acknowledgementTimeout
        )
        machine.connectWritten(at: .zero)
        guard case .accepted = machine.handshakeReceived(Self.connack, at: .zero) else {
            Issue.record("CONNACK not accepted")
            return machine
        }
        return machine
    }

    static let connack = MQTTPacket.connack(.init(sessionPresent: false, returnCode: .accepted))

    static func token(_ value: UInt64) -> WaiterToken { WaiterToken(rawValue: value) }

    static func publication(_ qos: MQTTQoS, topic: String = "t", payload: [UInt8] = [1]) -> MQTTPublishPacket {
        MQTTPublishPacket(topic: topic, payload: payload, qos: qos)
    }

    /// What the writer would write now, decoded (empties the outbound buffer).
    static func written(by machine: inout Machine) throws -> [MQTTPacket] {
        var batch: [UInt8] = []
        guard case .write = machine.takeOutbound(swapping: &batch) else { return [] }
        var decoder = MQTTPacketDecoder()
        decoder.append(batch)
        var packets: [MQTTPacket] = []
        while let packet = try decoder.next() { packets.append(packet) }
        return packets
    }

    /// The size of the outbound buffer.
    static func queuedBytes(in machine: Machine) -> Int {
        switch machine.phase {
        case .connected(let link), .closing(let link, _): link.outbound.count
        default: 0
        }
    }

    /// The link of a connected or closing machine.
    static func link(of machine: Machine) -> Machine.Link? {
        switch machine.phase {
        case .connected(let link), .closing(let link, _): link
        default: nil
        }
    }

    /// The phase's name, for expectations.
    static func phaseName(of machine: Machine) -> String {
        switch machine.phase {
        case .handshaking: "handshaking"
        case .connected: "connected"
        case .closing: "closing"
        case .closed: "closed"
        case .modifying: "modifying"
        }
    }
}

extension MQTTClientStateMachine.EnqueueAction {
    /// The writer to wake, if queued.
    var queuedWaking: WaiterToken?? {
        guard case .queued(let writer) = self else { return nil }
        return .some(writer)
    }

    var isQueued: Bool { self.queuedWaking != nil }
    var isFull: Bool { if case .full = self { true } else { false } }
    var isWaitingForWindow: Bool { if case .waitingForWindow = self { true } else { false } }
    var failureCode: TransportError.Code? { if case .failed(let error) = self { error.code } else { nil } }
}

extension MQTTClientStateMachine.WaitAction {
    var isWait: Bool { if case .wait = self { true } else { false } }
    var isReady: Bool { if case .ready = self { true } else { false } }
    var failureCode: TransportError.Code? { if case .failed(let error) = self { error.code } else { nil } }
}

extension MQTTClientStateMachine.Resumption {
    /// The outcome as a comparable value: `nil` for success, the error code for a failure.
    var failureCode: TransportError.Code? {
        if case .failure(let error) = self.result { error.code } else { nil }
    }

    var succeeded: Bool { self.failureCode == nil }
}

extension Array where Element == MQTTClientStateMachine.Resumption {
    /// The resumptions as token → failure code (`nil` for success).
    var outcomes: [WaiterToken: TransportError.Code?] {
        Dictionary(self.map { ($0.token, $0.failureCode) }, uniquingKeysWith: { first, _ in first })
    }
}
