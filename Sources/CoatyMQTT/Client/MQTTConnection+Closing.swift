import CoatySockets
import CoatyTransport
import Synchronization

extension MQTTConnection {
    /// Records the first failure: closes the socket and fails everything pending.
    ///
    /// With a persistent session, what is left of it is kept in ``sessionLeft``, and a publication that
    /// stays in it fails with an error whose cause is ``MQTTPublicationKept``.
    func fail(_ error: TransportError) {
        if let closure = self.machine.withLock({ $0.fail(error) }) { self.perform(closure) }
    }

    /// Closes the socket and resumes every waiter, as the machine decided on closing.
    func perform(_ closure: MQTTClientStateMachine.Closure) {
        self.socket.close()
        self.resume(closure.resumptions)
    }

    /// Queues DISCONNECT, waits (bounded) until it is written, then closes.
    func disconnect() async {
        guard self.queueDisconnect() else { return }
        let timeout = min(self.configuration.connectTimeout, .seconds(5))
        _ = try? await withTimeout(timeout, clock: self.clock, timeoutError: { CancellationError() }) {
            try await self.wait { $0.waitForFlush($1) }
        }
        await self.socket.shutdownOutput()
        self.fail(TransportError(.connectionClosed, "the connection was closed"))
    }

    /// Queues DISCONNECT, the last packet: nothing is queued after it [MQTT-3.14.4-1].
    ///
    /// - Returns: Whether this call queued it; `false` if the connection failed or is already
    ///   disconnecting.
    func queueDisconnect() -> Bool {
        guard case .queued(let writer) = self.machine.withLock({ $0.disconnect() }) else { return false }
        self.wake(writer)
        return true
    }
}
