import CoatyCore
import CoatySockets
import CoatyTransport
import Synchronization

extension MQTTConnection {
    /// Writes queued packets until the connection fails or the task is cancelled.
    ///
    /// Each write takes the whole outbound buffer, so packets queued while a write is in progress go
    /// out together in the next one. The batch buffer is reused unless a burst made it large.
    func runWriter() async {
        var batch: [UInt8] = []
        while true {
            switch self.machine.withLock({ $0.takeOutbound(swapping: &batch) }) {
            case .stop:
                return
            case .idle:
                do {
                    try await self.wait { $0.writerWaits($1) }
                } catch {
                    return
                }
            case .write(let drained):
                for token in drained { self.waiters.resume(token) }
                do {
                    try await self.socket.write(batch)
                } catch {
                    self.fail(self.lost(error))
                    return
                }
                let now = self.clock.now
                let flushed = self.machine.withLock { $0.written(at: now) }
                for token in flushed { self.waiters.resume(token) }
                if batch.capacity > 4 * MQTTClientStateMachine.outboundHighWater {
                    batch = []
                } else {
                    batch.removeAll(keepingCapacity: true)
                }
            }
        }
    }
}
