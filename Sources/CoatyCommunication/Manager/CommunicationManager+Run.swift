import CoatyCore
import CoatyModel
import CoatyTransport
import Synchronization

extension CommunicationManager {
    /// Connects, routes events and reconnects until stopped.
    ///
    /// On every (re)connect it subscribes every current observation in one subscribe call, publishes
    /// the join event (Advertise of the identity, `ADV:Identity`) and only then the queued
    /// publications, in order. The last will of the connection is the unjoin Deadvertise
    /// (`coaty/3/<namespace>/DAD/<identityID>` with the identity id).
    ///
    /// When the connection fails or is lost, the state goes `.offline` and `run()` reconnects after
    /// a delay that doubles from ``Configuration/initialReconnectDelay`` up to
    /// ``Configuration/maximumReconnectDelay``.
    ///
    /// `run()` stops when ``finish()`` is called or its task is cancelled. Either way, once online, it
    /// sends the queued publications and the unjoin Deadvertise while connected, then returns so the
    /// transport closes the connection; after ``finish()`` the close is graceful (no last will). After
    /// a cancellation the transport may close abruptly, in which case the peer publishes the last will,
    /// the same Deadvertise, a second time. A stop that comes before the agent is online (while the
    /// transport connects or the join goes out) abandons the attempt: the close is abrupt, so a join
    /// already sent is undone by the last will. Publications still queued when `run()` ends are dropped
    /// and reported (``observeDiagnostics()``). Every stream of the manager finishes, the state goes
    /// `.offline`, and `run()` returns normally. It can be called again afterwards.
    ///
    /// Every failure to connect, and every loss of the connection, is reported with its reason as a
    /// ``CommunicationDiagnostic/Kind/connectionFailed`` diagnostic and in ``connectionFailure``, and
    /// logged: at `warning` for the first failure in a row and then for the 2nd, 4th, 8th… (so a
    /// broker that stays away costs a line every few minutes, not every attempt), at `debug` otherwise.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidConfiguration`` at
    ///   once, without retrying, when the transport's configuration can never work (`TransportError`
    ///   `.invalidConfiguration`, such as a broker URL with an unsupported scheme, a malformed URL or
    ///   a port out of range); with code ``CommunicationError/Code/alreadyRunning`` if `run()`
    ///   is already running, and with code ``CommunicationError/Code/invalidArgument`` if the namespace
    ///   or the identity's object id cannot be a topic level (empty, or with `/`, `+`, `#` or U+0000):
    ///   every topic the agent publishes carries both.
    public func run() async throws {
        try EventValidation.checkFilterName(self.configuration.namespace, "namespace")
        try EventValidation.checkFilterName(self.identity.objectID.rawValue, "identity objectId")
        var attempt = self.waiters.makeToken()
        switch self.state.withLock({ $0.machine.start(abandon: attempt) }) {
        case .alreadyRunning:
            self.waiters.discard(attempt)
            throw CommunicationError(.alreadyRunning, "run() is already running")
        case .endRun:
            // A finish() that came before run() stands: run() returns at once.
            self.waiters.discard(attempt)
            self.endRun()
            return
        case .connect:
            break
        }
        defer { self.endRun() }

        let options = TransportConnectOptions(
            clientID: self.clientID,
            lastWill: self.unjoinMessage(),
            logger: self.configuration.logger
        )
        // Failures in a row since the agent was last online, for the rate limit of their log lines.
        var failures = 0
        while true {
            do {
                try await self.connect(options, abandonedBy: attempt)
                return
            } catch {
                if Task.isCancelled { return }
                if let failure = error as? TransportError, failure.code == .invalidConfiguration {
                    self.reportConnectionFailure(error, retryingIn: nil, failures: 1)
                    throw CommunicationError(.invalidConfiguration, failure.message, underlying: failure)
                }
                let interrupt = self.waiters.makeToken()
                let (ended, wasOnline) = self.state.withLock { state in
                    defer { self.updateCommunicationState(in: &state) }
                    let wasOnline = state.reportedState == .online
                    state.connectionFailure = error
                    return (state.machine.connectionEnded(interrupt: interrupt), wasOnline)
                }
                guard case .reconnect(let delay, let releasing) = ended else {
                    self.waiters.discard(interrupt)
                    return
                }
                self.resume(releasing)
                failures = wasOnline ? 1 : failures + 1
                self.reportConnectionFailure(error, retryingIn: delay, failures: failures)
                await self.backoff(delay, interruptedBy: interrupt)
            }
            if Task.isCancelled { return }
            attempt = self.waiters.makeToken()
            guard self.state.withLock({ $0.machine.backoffElapsed(abandon: attempt) }) == .connect else {
                self.waiters.discard(attempt)
                return
            }
        }
    }

    /// Opens one connection and serves it until stopped (returns) or lost (throws).
    ///
    /// A ``finish()`` that comes before the agent is online (while the transport connects, or while the
    /// join goes out) resumes `abandon`, which cancels the attempt at once, as a cancellation does: a
    /// connect to a broker that does not answer could otherwise hold `finish()` for the transport's
    /// whole connect timeout, and there is nothing to unjoin yet (a join already sent is undone by the
    /// last will, which an abrupt close publishes). Once online, ``serve(_:)`` stops gracefully by itself.
    private func connect(_ options: TransportConnectOptions, abandonedBy abandon: WaiterToken) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await self.transport.withConnection(
                    options,
                    onMessage: { [weak self] message in self?.receive(message) },
                    { connection in try await self.serve(connection) }
                )
            }
            group.addTask { try? await self.waiters.wait(abandon) }
            // The connection ended, or the attempt was abandoned before it got online.
            try await group.next()
            group.cancelAll()
        }
    }

    /// Waits `delay` on the manager's clock, or until `interrupt` is resumed (a stop) or the task is
    /// cancelled.
    private func backoff(_ delay: Duration, interruptedBy interrupt: WaiterToken) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await self.sleep(delay) }
            group.addTask { try? await self.waiters.wait(interrupt) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Works with one connection until stopped (returns) or lost (throws).
    private func serve(_ connection: any TransportConnection) async throws {
        // Subscribe everything in one call; observations added meanwhile are picked up in a loop.
        var next = self.state.withLock { $0.machine.connected(connection) }
        while case .subscribe(let filters) = next {
            if !filters.isEmpty { try await connection.subscribe(to: filters) }
            next = self.state.withLock { $0.machine.initialSubscriptionsSent() }
        }
        // A stop requested before the agent is online abandons the connection (see `connect`).
        guard next == .join else { throw CancellationError() }
        // Join before anything queued.
        for message in self.joinMessages() { try await connection.publish(message) }
        let joined = self.state.withLock { state in
            defer { self.updateCommunicationState(in: &state) }
            state.connectionFailure = nil
            return state.machine.joinSent()
        }
        guard joined == .online else { throw CancellationError() }

        let failure: (any Error)? = await withTaskGroup(of: (any Error)?.self) { group in
            group.addTask {
                await connection.waitUntilClosed()
                return Task.isCancelled ? nil : TransportError(.connectionLost, "the connection closed")
            }
            group.addTask {
                do {
                    try await self.sendLoop(connection)
                    return nil
                } catch {
                    return error
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        if let failure, !(failure is CancellationError) { throw failure }
        // Stopping (finish() or cancellation): unjoin while still connected.
        try? await connection.publish(self.unjoinMessage())
    }

    /// Reports a failed connection attempt or a lost connection: a diagnostic to every observer, and a
    /// log line, rate-limited while retrying (see ``run()``).
    private func reportConnectionFailure(_ error: any Error, retryingIn delay: Duration?, failures: Int) {
        let reason = delay.map { "\(error); reconnecting in \($0)" } ?? "\(error); not retrying"
        let diagnostic = CommunicationDiagnostic(kind: .connectionFailed, topic: "", reason: reason)
        for observer in self.state.withLock({ Array($0.diagnosticObservers.values) }) { observer.yield(diagnostic) }
        let isLogged = delay == nil || failures & (failures - 1) == 0
        self.configuration.logger.log(
            level: delay == nil ? .error : isLogged ? .warning : .debug,
            "connection failed or lost: \(reason)",
            metadata: ["clientID": self.clientID, "error": "\(error)", "failures": "\(failures)"]
        )
    }

    private func endRun() {
        let (end, stateObservers, diagnosticObservers) = self.state.withLock { state in
            let end = state.machine.runEnded()
            self.updateCommunicationState(in: &state)
            defer {
                state.stateObservers = [:]
                state.diagnosticObservers = [:]
            }
            return (end, Array(state.stateObservers.values), Array(state.diagnosticObservers.values))
        }
        self.resume(end.waiters)
        // Publications still queued (the manager stopped while offline, or was cancelled) are dropped,
        // and reported before the diagnostics streams finish.
        for message in end.unsent.flatMap(\.messages) {
            let diagnostic = CommunicationDiagnostic(
                kind: .droppedPublication,
                topic: message.topic,
                reason: "not sent before run() ended"
            )
            self.report(diagnostic, to: diagnosticObservers)
        }
        for entry in end.entries { entry.receiver.finish() }
        for observer in stateObservers { observer.finish() }
        for observer in diagnosticObservers { observer.finish() }
    }

    // MARK: Join and unjoin

    /// The join events: Advertise of the identity, then of each IO node, with the core-type filter only.
    func joinMessages() -> [TransportMessage] {
        var messages: [TransportMessage] = []
        for object in [self.identity as CoatyObject] + self.configuration.ioNodes {
            let topic = CoatyTopic(
                namespace: self.namespace,
                code: .advertise,
                filter: object.coreType.rawValue,
                sourceID: self.identity.objectID
            )
            let payload = AdvertiseEvent.Payload(object: object, privateData: nil)
            do {
                messages.append(TransportMessage(topic: topic.formatted, payload: try EventCoding.encode(payload)))
            } catch {
                self.configuration.logger.error(
                    "cannot encode join event: \(error)",
                    metadata: ["topic": topic.formatted]
                )
            }
        }
        return messages
    }

    /// The unjoin event and last will: Deadvertise of the identity.
    func unjoinMessage() -> TransportMessage {
        let topic = CoatyTopic(namespace: self.namespace, code: .deadvertise, sourceID: self.identity.objectID)
        let payload = DeadvertiseEvent.Payload(
            objectIds: [self.identity.objectID] + self.configuration.ioNodes.map(\.objectID)
        )
        let bytes = (try? EventCoding.encode(payload)) ?? []
        return TransportMessage(topic: topic.formatted, payload: bytes)
    }
}
