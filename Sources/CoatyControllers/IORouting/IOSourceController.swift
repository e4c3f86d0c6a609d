public import CoatyCommunication
import CoatyCore
public import CoatyModel
import Synchronization

/// Publishes the values of this agent's IO sources on the routes they are associated on, at the pace
/// their associations ask for (coaty-js `IoSourceController` and `CommunicationManager.publishIoValue`).
///
/// The controller follows the Associate events of the IO contexts of this agent's IO nodes
/// (`CommunicationManager.Configuration.ioNodes`), from connect on. A value published for a source
/// that is not associated is dropped, as in coaty-js. While a source is associated with a recommended
/// update rate, its `updateStrategy` decides (coaty-js `IoSourceBackpressureStrategy`):
///
/// - `.none`, or no rate (or 0): every value goes out at once;
/// - `.default` and `.sample`: at most one value per update rate, the most recent one at the end of
///   each interval (rxjs `sampleTime`; the first interval starts with the first value);
/// - `.throttle`: a value goes out once the update rate has passed without another value (rxjs
///   `debounceTime`, which coaty-js uses for it).
///
/// A value waiting for its interval is dropped when the source's associations change, as coaty-js drops
/// scheduled values then. ``observeAssociation(for:)`` tells when a source is associated, so that its
/// values go out.
///
/// ```swift
/// let sources = IOSourceController()
/// // … in a container with [sources], an IONode holding `thermometer`:
/// try sources.publish(.double(21.5), from: thermometer)
/// ```
public final class IOSourceController: Controller {
    /// One source's associations and pacing.
    private struct Item {
        let source: IOSource
        let contextName: String
        /// Associated actors with the route and rate of their Associate.
        var associations: [ObjectID: (route: String, rate: Int?)] = [:]
        /// The value waiting for its interval; the end of the sample interval it opened; when the latest
        /// value came (for throttling).
        var pending: [UInt8]?
        var sampleEnd: ContinuousClock.Instant?
        var lastValueAt: ContinuousClock.Instant?
        let bell = Doorbell()
        var association = AssociationObservers()

        var routes: Set<String> { Set(self.associations.values.map(\.route)) }
        var rate: Int? { self.associations.values.compactMap(\.rate).max() }

        /// The interval values wait for, or `nil` when they go out at once.
        var interval: Duration? {
            guard let rate, rate > 0, self.source.updateStrategy != IOSourceUpdateStrategy.none else { return nil }
            return .milliseconds(rate)
        }
    }

    private struct State {
        var controller: ControllerContext?
        var items: [ObjectID: Item] = [:]
        var nextID = 0
        /// Set when the agent stops: later observers get a finished stream.
        var isStopped = false
    }

    private let state = Mutex(State())

    /// Creates the controller; add it to a ``Container``.
    public init() {}

    /// Registers the Associate observations of this agent's IO contexts, so that they are in place when
    /// it connects, and starts pacing its IO sources.
    public func onInit(context controller: ControllerContext) async throws {
        let nodes = controller.communication.configuration.ioNodes
        var items: [ObjectID: Item] = [:]
        for node in nodes {
            for source in node.ioSources ?? [] { items[source.objectID] = Item(source: source, contextName: node.name) }
        }
        let observations = try await controller.communication.observeAssociates(
            ofContextsOf: nodes.filter { !($0.ioSources ?? []).isEmpty }
        )
        self.state.withLock { state in
            state.controller = controller
            state.items = items
        }
        for associations in observations {
            controller.spawn { [weak self] in
                for await associate in associations { self?.take(associate) }
            }
        }
        for id in items.keys {
            controller.spawn { [weak self] in await self?.pace(id) }
        }
    }

    /// Ends the association streams.
    public func onCommunicationManagerStopping() async {
        let listeners = self.state.withLock { state in
            state.isStopped = true
            var listeners: [EventStream<Bool>.Continuation] = []
            for id in state.items.keys { listeners += state.items[id]?.association.removeAll() ?? [] }
            return listeners
        }
        for listener in listeners { listener.finish() }
    }

    /// Whether `source` has at least one association now.
    public func isAssociated(_ source: IOSource) -> Bool {
        self.state.withLock { !($0.items[source.objectID]?.associations.isEmpty ?? true) }
    }

    /// Whether `source` is associated: the current state first, then each change (coaty-js
    /// `IoSourceController.observeAssociation`).
    ///
    /// A change is yielded once the controller acts on it: a value published after `true` goes out,
    /// one published after `false` is dropped. Returns without suspending. The stream finishes when the
    /// consumer stops or the agent stops.
    ///
    /// - Throws: `CommunicationError` with code `.notRunning` before the container initialised the
    ///   controller, or `.invalidArgument` if `source` is in none of this agent's IO nodes.
    public func observeAssociation(for source: IOSource) throws -> EventStream<Bool> {
        typealias Listener = (stream: EventStream<Bool>, continuation: EventStream<Bool>.Continuation)
        let sourceID = source.objectID
        let (listener, id) = try self.state.withLock { state -> (Listener, Int?) in
            guard let controller = state.controller else {
                throw CommunicationError(.notRunning, "the controller has not been initialised by a container")
            }
            guard state.items[sourceID] != nil else {
                throw CommunicationError(.invalidArgument, "IO source \(sourceID) is in none of this agent's IO nodes")
            }
            let listener = EventStream<Bool>.makeStream(
                bufferingNewest: controller.communication.configuration.observerBufferSize
            )
            guard !state.isStopped else { return (listener, nil) }
            state.nextID += 1
            state.items[sourceID]?.association.add(listener.continuation, id: state.nextID)
            return (listener, state.nextID)
        }
        guard let id else {
            listener.continuation.finish()
            return listener.stream
        }
        listener.continuation.onTermination { [weak self] in
            self?.state.withLock { $0.items[sourceID]?.association.remove(id) }
        }
        return listener.stream
    }

    /// Publishes a JSON value for `source` if it is associated, at the pace its associations ask for.
    ///
    /// - Throws: `CommunicationError` with code `.notRunning` before the container initialised the
    ///   controller, or `.invalidArgument` if `source` is in none of this agent's IO nodes, or
    ///   `.outboxFull` if the manager's outbox is full while online (it does not wait; see
    ///   `CommunicationManager.publishWithoutWaiting(_:)`); an encoding error.
    public func publish(_ value: AnyCodable, from source: IOSource) throws {
        try self.publish(payload: try EventCoding.encode(value), from: source)
    }

    /// Publishes raw bytes for `source` (an IO source with `useRawIoValues`), like
    /// ``publish(_:from:)``.
    public func publish(bytes: [UInt8], from source: IOSource) throws {
        try self.publish(payload: bytes, from: source)
    }

    private func publish(payload: [UInt8], from source: IOSource) throws {
        let (routes, controller, bell) = try self.state.withLock { state -> ([String], ControllerContext?, Doorbell?) in
            guard let controller = state.controller else {
                throw CommunicationError(.notRunning, "the controller has not been initialised by a container")
            }
            guard var item = state.items[source.objectID] else {
                throw CommunicationError(
                    .invalidArgument,
                    "IO source \(source.objectID) is in none of this agent's IO nodes"
                )
            }
            guard !item.associations.isEmpty else { return ([], nil, nil) }
            guard let interval = item.interval else { return (Array(item.routes), controller, nil) }
            let now = ContinuousClock.now
            item.pending = payload
            item.lastValueAt = now
            let opensInterval = item.sampleEnd == nil
            if opensInterval { item.sampleEnd = now + interval }
            state.items[source.objectID] = item
            // A throttled value moves the deadline, which the pacer reads when it wakes.
            return ([], nil, opensInterval || item.source.updateStrategy == .throttle ? item.bell : nil)
        }
        bell?.ring()
        for route in routes {
            try controller?.communication.publishWithoutWaiting(try IOValueEvent(route: route, bytes: payload))
        }
    }

    // MARK: Associations and pacing

    /// Applies an Associate to the source it names, dropping a value that waits for its interval.
    private func take(_ associate: AssociateEvent) {
        self.state.withLock { state in
            guard var item = state.items[associate.ioSourceID],
                associate.ioContextName.utf8.elementsEqual(item.contextName.utf8)
            else { return }
            if let route = associate.associatingRoute {
                item.associations[associate.ioActorID] = (route, associate.updateRate)
            } else {
                item.associations[associate.ioActorID] = nil
            }
            item.pending = nil
            item.sampleEnd = nil
            item.association.set(!item.associations.isEmpty)
            state.items[associate.ioSourceID] = item
        }
    }

    /// Sends the values of one source that wait for their interval, until cancelled.
    private func pace(_ id: ObjectID) async {
        guard let bell = self.state.withLock({ $0.items[id]?.bell }) else { return }
        while !Task.isCancelled {
            await bell.wait()
            while let deadline = self.state.withLock({ $0.items[id].flatMap(Self.deadline) }) {
                do {
                    try await Task.sleep(until: deadline, clock: .continuous)
                } catch {
                    return
                }
                self.flush(id)
            }
        }
    }

    /// When the pending value of `item` is due: at the end of its sample interval, or once its update
    /// rate has passed without a newer value (throttle); `nil` if nothing waits.
    private static func deadline(_ item: Item) -> ContinuousClock.Instant? {
        guard item.pending != nil, let interval = item.interval else { return nil }
        if item.source.updateStrategy == .throttle { return item.lastValueAt.map { $0 + interval } }
        return item.sampleEnd
    }

    /// Publishes the pending value of `id` on its routes if it is due.
    private func flush(_ id: ObjectID) {
        let due = self.state.withLock { state -> ([UInt8], [String], ControllerContext)? in
            guard var item = state.items[id], let controller = state.controller, let payload = item.pending,
                let deadline = Self.deadline(item), deadline <= .now
            else { return nil }
            item.pending = nil
            item.sampleEnd = nil
            state.items[id] = item
            return (payload, Array(item.routes), controller)
        }
        guard let (payload, routes, controller) = due else { return }
        for route in routes {
            do {
                try controller.communication.publishWithoutWaiting(try IOValueEvent(route: route, bytes: payload))
            } catch {
                controller.communication.configuration.logger.warning(
                    "sampled IO value not published: \(error)",
                    metadata: ["route": route]
                )
            }
        }
    }
}
