import CoatyCore
import CoatySockets
import CoatyTransport
import Synchronization

extension MQTTConnection {
    /// Writes queued packets until the connection fails or the task is cancelled.
    ///
    /// Each write takes the whole outbound buffer, so packets queued while a write is in progress go
    /// out together in the next one. The batch buffer is reused unless a burst made it large. What a
    /// task sending directly left over (see ``wake(_:)``) goes first when the writer is woken: a
    /// leftover is only ever handed to a waiting writer, with its token.
    func runWriter() async {
        var batch: [UInt8] = []
        while true {
            switch self.machine.withLock({ $0.takeOutbound(swapping: &batch) }) {
            case .stop:
                return
            case .idle:
                do {
                    try await self.wait { $0.writerWaits($1) }
                    try await self.writeLeftover()
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
                self.noteWritten()
                if batch.capacity > MQTTClientStateMachine.largestKeptBatch {
                    batch = []
                } else {
                    batch.removeAll(keepingCapacity: true)
                }
            }
        }
    }

    /// Sends what a direct send left over, if anything; a failure fails the connection and throws.
    private func writeLeftover() async throws {
        let left = self.leftover.withLock { leftover in
            defer { leftover = [] }
            return leftover
        }
        guard !left.isEmpty, let direct = self.directSocket else { return }
        do {
            try await direct.writeLeftover(left)
        } catch {
            self.fail(self.lost(error))
            throw error
        }
        self.noteWritten()
    }

    /// Tells the machine that a batch went out, and resumes the waiters that waited for it (a graceful
    /// close waits for its DISCONNECT).
    func noteWritten() {
        let now = self.clock.now
        for token in self.machine.withLock({ $0.written(at: now) }) { self.waiters.resume(token) }
    }
}
