import CoatyCore
import CoatyMQTTPackets
import CoatyTransport
import Synchronization

@testable import CoatyMQTT

extension MQTTConnection {
    /// Feeds the machine an accepting CONNACK, for tests that drive a connection without a handshake.
    func acceptWithoutHandshake() {
        let now = self.clock.now
        self.machine.withLock { machine in
            _ = machine.handshakeReceived(.connack(.init(sessionPresent: false, returnCode: .accepted)), at: now)
        }
    }
}
