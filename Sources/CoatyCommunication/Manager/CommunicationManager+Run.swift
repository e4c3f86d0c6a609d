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
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/alreadyRunning`` if `run()`
    ///   is already running, and with code ``CommunicationError/Code/invalidArgument`` if the namespace
    ///   or the identity's object id cannot be a topic level (empty, or with `/`, `+`, `#` or U+0000):
    ///   every topic the agent publishes carries both.
    public func run() async throws {
        try EventValidation.checkFilterName(self.configuration.namespace, "namespace")
        try EventValidation.checkFilterName(self.identity.objectID.rawValue, "identity objectId")
        let stop = OneShotSignal()
        try self.state.withLock { state throws(CommunicationError) in
            guard !state.isRunning else { throw CommunicationError(.alreadyRunning, "run() is already running") }
            state.isRunning = true
            // A finish() that came before run() stands: run() then returns at once. endRun() clears it.
        }
        self.stopSignal.withLock { $0 = stop }
        defer { self.endRun() }

        let options = TransportConnectOptions(clientID: self.clientID, lastWill: self.unjoinMessage())
        var delay = self.configuration.initialReconnectDelay
        while !Task.isCancelled && !self.isStopRequested {
            do {
                try await self.connect(options, abandonedBy: stop)
                return
            } catch {
                let (wasOnline, control) = self.state.withLock { state in
                    let wasOnline = state.communicationState == .online
                    self.disconnected(&state)
                    return (wasOnline, state.control.takeAll())
                }
                // The commands the send loop did not take die with the connection: the next one
                // subscribes every observed filter, and nothing is subscribed to unsubscribe. Their
                // observers return now, as an observation made offline does, instead of waiting for a
                // connection that may be long in coming.
                Self.releaseWaiters(of: control)
                if Task.isCancelled || self.isStopRequested { return }
                if wasOnline { delay = self.configuration.initialReconnectDelay }
                self.configuration.logger.warning(
                    "connection failed or lost: \(error); reconnecting in \(delay)",
                    metadata: ["clientID": self.clientID, "error": "\(error)"]
                )
            }
            await self.sleep(delay, unlessStopped: stop)
            delay = min(delay * 2, self.configuration.maximumReconnectDelay)
        }
    }

    var isStopRequested: Bool { self.state.withLock { $0.isStopRequested } }

    /// Opens one connection and serves it until stopped (returns) or lost (throws).
    ///
    /// A ``finish()`` that comes before the agent is online (while the transport connects, or while the
    /// join goes out) abandons the attempt at once, as a cancellation does: a connect to a broker that
    /// does not answer could otherwise hold `finish()` for the transport's whole connect timeout, and
    /// there is nothing to unjoin yet (a join already sent is undone by the last will, which an abrupt
    /// close publishes). Once online, ``serve(_:)`` stops gracefully by itself.
    private func connect(_ options: TransportConnectOptions, abandonedBy stop: OneShotSignal) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await self.transport.withConnection(
                    options,
                    onMessage: { [weak self] message in self?.receive(message) },
                    { connection in try await self.serve(connection) }
                )
                return true
            }
            group.addTask {
                await stop.wait()
                return false
            }
            while let connectionEnded = try await group.next() {
                // `finish()` marks the stop before it fires the signal, and `serve` checks that mark under
                // the lock it takes to go online: either the agent went online first, and stops
                // gracefully (cancelling it would lose its queued publications), or it never goes
                // online, and the attempt is cancelled here.
                if connectionEnded || self.state.withLock({ $0.communicationState != .online }) {
                    group.cancelAll()
                    return
                }
            }
        }
    }

    private func sleep(_ delay: Duration, unlessStopped stop: OneShotSignal) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: delay) }
            group.addTask { await stop.wait() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Works with one connection until stopped (returns) or lost (throws).
    private func serve(_ connection: any TransportConnection) async throws {
        // Subscribe everything in one call; observations added meanwhile are picked up in a loop.
        var filters = self.state.withLock { $0.routing.connected() }
        while true {
            if !filters.isEmpty { try await connection.subscribe(to: filters) }
            filters = self.state.withLock { state -> [TopicFilter] in
                let missing = state.routing.markNeededSubscribed()
                if missing.isEmpty { state.acceptsControl = true }
                return missing
            }
            if filters.isEmpty { break }
        }
        // Join before anything queued.
        for message in self.joinMessages() { try await connection.publish(message) }
        let hasQueued = try self.state.withLock { state throws(CancellationError) -> Bool in
            // A stop requested before the agent is online abandons the connection (see `connect`).
            guard !state.isStopRequested else { throw CancellationError() }
            state.liveConnection = connection
            self.setCommunicationState(.online, in: &state)
            return !state.outbox.isEmpty
        }
        // A publication queued while offline rang the doorbell, but one put back by a send that failed
        // on the last connection did not: without this ring it waited for the next publication.
        if hasQueued { self.doorbell.ring() }

        let failure: (any Error)? = await withTaskGroup(of: (any Error)?.self) { group in
            group.addTask {
                await connection.waitUntilClosed()
                return Task.isCancelled ? nil : TransportError(.connectionLost, "the connection closed")
            }
            group.addTask {
                do {
                    try await self.drain(connection)
                    return nil
                } catch {
                    return error
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        self.state.withLock { $0.liveConnection = nil }
        if let failure, !(failure is CancellationError) { throw failure }
        // Stopping (finish() or cancellation): unjoin while still connected.
        try? await connection.publish(self.unjoinMessage())
    }

    /// Sends control commands and queued publications until stopped or cancelled.
    private func drain(_ connection: any TransportConnection) async throws {
        while true {
            await self.doorbell.wait()
            let (control, messages, isStopRequested) = self.state.withLock { state in
                let control = state.control.takeAll()
                let messages = state.outbox.removeAll()
                state.isPublishing = !messages.isEmpty
                if !control.isEmpty { state.controlInFlight = Set(control.map(\.filter)) }
                return (control, messages, state.isStopRequested)
            }
            var unsubscribing: [TopicFilter] = []
            // The commands not done yet. When the connection fails, their waiting observers are released
            // too: the reconnect subscribes every observed filter, as for an observation made offline.
            // Dropping them left `observe…` suspended for good, even after `run()` returned.
            var pending = control[...]
            do {
                while let command = pending.first {
                    switch command {
                    case .subscribe(let filter, let waiter):
                        try await self.unsubscribe(&unsubscribing, on: connection)
                        // A finished request may be releasing the same filter from its own task right
                        // now (only a reused correlation id gets here): let that finish first, so the
                        // subscription is not undone. That release does not suspend, so this is short.
                        while self.state.withLock({ $0.directReleases.contains(filter) }) { await Task.yield() }
                        if let signal = self.state.withLock({ $0.claimSubscription(of: filter) }) {
                            defer { self.endSubscribing(filter, signal) }
                            try await connection.subscribe(to: [filter])
                        }
                        pending.removeFirst()
                        waiter?.fire()
                    case .unsubscribe(let filter):
                        if self.state.withLock({ $0.routing.claimUnsubscribe(filter) }) { unsubscribing.append(filter) }
                        pending.removeFirst()
                    }
                }
                try await self.unsubscribe(&unsubscribing, on: connection)
            } catch {
                Self.releaseWaiters(of: pending)
                // The publications taken with the commands go back to the outbox, in order, as those of
                // a failed send do, so the next connection sends them instead of losing them.
                self.requeue(messages)
                throw error
            }
            if !control.isEmpty { self.state.withLock { $0.controlInFlight = [] } }
            for (index, message) in messages.enumerated() {
                do {
                    try await connection.publish(message)
                } catch {
                    self.requeue(Array(messages[index...]))
                    throw error
                }
            }
            if !messages.isEmpty { self.state.withLock { $0.isPublishing = false } }
            if isStopRequested || Task.isCancelled { return }
        }
    }

    /// Unsubscribes the collected filters in one request, keeping the order of control commands.
    private func unsubscribe(_ filters: inout [TopicFilter], on connection: any TransportConnection) async throws {
        guard !filters.isEmpty else { return }
        defer { filters = [] }
        try await connection.unsubscribe(from: filters)
    }

    private func requeue(_ messages: [TransportMessage]) {
        let dropped = self.state.withLock { $0.outbox.prepend(messages) }
        for message in dropped {
            self.report(.init(kind: .droppedPublication, topic: message.topic, reason: "outbox full"))
        }
    }

    /// Resumes the observers waiting for subscribe commands that will not be sent on this connection.
    private static func releaseWaiters(of commands: some Sequence<ControlCommand>) {
        for case .subscribe(_, let waiter?) in commands { waiter.fire() }
    }

    /// Marks the connection gone: offline, nothing subscribed, waiting observers released.
    func disconnected(_ state: inout ManagerState) {
        state.acceptsControl = false
        state.liveConnection = nil
        state.isPublishing = false
        state.controlInFlight = []
        state.routing.disconnected()
        self.setCommunicationState(.offline, in: &state)
    }

    private func endRun() {
        let (entries, stateObservers, diagnosticObservers, control, unsent) = self.state.withLock { state in
            self.disconnected(&state)
            state.isRunning = false
            state.isStopRequested = false
            defer {
                state.stateObservers = [:]
                state.diagnosticObservers = [:]
            }
            return (
                state.routing.removeAll(), Array(state.stateObservers.values), Array(state.diagnosticObservers.values),
                state.control.takeAll(), state.outbox.removeAll()
            )
        }
        self.stopSignal.withLock { $0 = nil }
        Self.releaseWaiters(of: control)
        // Publications still queued (the manager stopped while offline, or was cancelled) are dropped,
        // and reported before the diagnostics streams finish.
        for message in unsent {
            let diagnostic = CommunicationDiagnostic(
                kind: .droppedPublication,
                topic: message.topic,
                reason: "not sent before run() ended"
            )
            self.report(diagnostic, to: diagnosticObservers)
        }
        for entry in entries { entry.receiver.finish() }
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
