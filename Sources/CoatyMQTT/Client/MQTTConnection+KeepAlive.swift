import CoatyCore
import CoatyTransport
import Synchronization

extension MQTTConnection {
    /// Ticks the machine's keep-alive at the instants it asks for, on the configured clock, until the
    /// connection closes (see ``MQTTClientStateMachine/keepAliveTick(at:)``).
    func runKeepAlive() async {
        while true {
            let now = self.clock.now
            switch self.machine.withLock({ $0.keepAliveTick(at: now) }) {
            case .sleep(let deadline):
                do {
                    try await self.clock.sleep(until: deadline)
                } catch {
                    return
                }
            case .ping(let writer):
                self.wake(writer)
            case .close(let closure):
                self.configuration.effectiveLogger.warning("no PINGRESP from \(self.broker) within the keep-alive")
                self.perform(closure)
                return
            case .stop:
                return
            }
        }
    }

    /// Lets the machine look at the exchanges in flight every half
    /// ``MQTTTransport/Configuration/acknowledgementTimeout``, on the configured clock, and closes the
    /// connection when one is overdue (see ``MQTTClientStateMachine/acknowledgementCheck()``).
    func runAcknowledgementWatchdog() async {
        guard let timeout = self.configuration.acknowledgementTimeout, timeout > .zero else { return }
        while true {
            // Relative to when the last look ended, so that looks delayed by a busy machine are not
            // caught up back to back: two looks are always at least half a timeout apart.
            do {
                try await self.clock.sleep(for: timeout / 2)
            } catch {
                return
            }
            switch self.machine.withLock({ $0.acknowledgementCheck() }) {
            case .keepWatching:
                continue
            case .close(let closure):
                self.configuration.effectiveLogger.warning("\(closure.failure.message)")
                self.perform(closure)
                return
            case .stop:
                return
            }
        }
    }
}
