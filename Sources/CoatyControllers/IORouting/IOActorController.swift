public import CoatyCommunication
import CoatyCore
public import CoatyModel
import Synchronization

/// Hands IO actors the values of whatever IO sources are associated with them, across association
/// changes (coaty-js `IoActorController` and `CommunicationManager.observeIoValue(actor)`).
///
/// The controller follows the Associate events of the IO contexts of this agent's IO nodes
/// (`CommunicationManager.Configuration.ioNodes`) from before the agent connects, as coaty-js's
/// communication manager does, so an actor's associations are known however late its values are asked
/// for. It observes each route an actor is associated on, and stops observing a route once no source
/// is associated with the actor on it any more. ``observeAssociation(for:)`` tells when an actor is
/// associated and its route observed.
///
/// ```swift
/// let actors = IOActorController()
/// // … in a container with [actors], an IONode holding `display`:
/// for await value in try actors.observeIOValues(for: display) {
///     print(value.value?.doubleValue ?? .nan)
/// }
/// ```
public final class IOActorController: Controller {
    /// One actor's associations and who wants its values.
    private struct Item {
        let contextName: String
        /// Whether the actor takes raw IO values; otherwise it gets only values that parse as JSON.
        let usesRawValues: Bool
        var routes = ActorRoutes()
        /// The observation of each route, by the token its forwarding work carries: a value is handed
        /// on only while its route is observed for the actor and by that very work.
        var tokens: [String: Int] = [:]
        var valueListeners: [Int: EventStream<IOValueEvent>.Continuation] = [:]
        var association = AssociationObservers()
    }

    private struct State {
        var controller: ControllerContext?
        var items: [ObjectID: Item] = [:]
        var nextID = 0
        /// Set when the agent stops: later observers get a finished stream.
        var isStopped = false

        mutating func makeID() -> Int {
            self.nextID += 1
            return self.nextID
        }
    }

    private let state = Mutex(State())

    /// Creates the controller; add it to a ``Container``.
    public init() {}

    /// Registers the Associate observations of this agent's IO contexts, so that they are in place when
    /// it connects, and follows them.
    public func onInit(context controller: ControllerContext) async throws {
        let nodes = controller.communication.configuration.ioNodes
        var items: [ObjectID: Item] = [:]
        for node in nodes {
            for actor in node.ioActors ?? [] {
                items[actor.objectID] = Item(contextName: node.name, usesRawValues: actor.useRawIoValues ?? false)
            }
        }
        let observations = try await controller.communication.observeAssociates(
            ofContextsOf: nodes.filter { !($0.ioActors ?? []).isEmpty }
        )
        self.state.withLock { state in
            state.controller = controller
            state.items = items
        }
        for associations in observations {
            controller.spawn { [weak self] in
                for await associate in associations {
                    guard let self else { return }
                    await self.take(associate, controller: controller)
                }
            }
        }
    }

    /// Ends the value and association streams.
    public func onCommunicationManagerStopping() async {
        let (values, associations) = self.state.withLock { state in
            state.isStopped = true
            var values: [EventStream<IOValueEvent>.Continuation] = []
            var associations: [EventStream<Bool>.Continuation] = []
            for (id, var item) in state.items {
                values.append(contentsOf: item.valueListeners.values)
                associations.append(contentsOf: item.association.removeAll())
                item.valueListeners = [:]
                for work in item.routes.removeAll() { work.cancel() }
                item.tokens = [:]
                state.items[id] = item
            }
            return (values, associations)
        }
        for listener in values { listener.finish() }
        for listener in associations { listener.finish() }
    }

    /// Whether `actor` is associated now, with the route of an association observed (see
    /// ``observeAssociation(for:)``); `false` for an actor in none of this agent's IO nodes.
    public func isAssociated(_ actor: IOActor) -> Bool {
        self.state.withLock { $0.items[actor.objectID]?.association.isAssociated ?? false }
    }

    /// Whether `actor` is associated: the current state first, then each change (coaty-js
    /// `IoActorController.observeAssociation`).
    ///
    /// `true` comes once the actor's first association is in place and its route observed, so a value
    /// that its source publishes after that reaches the ``observeIOValues(for:)`` streams; `false`
    /// once its last association has ended and no value is handed on any more. Returns without
    /// suspending. The stream finishes when the consumer stops or the agent stops.
    ///
    /// - Throws: `CommunicationError` with code `.notRunning` before the container initialised the
    ///   controller, or `.invalidArgument` if `actor` is in none of this agent's IO nodes.
    public func observeAssociation(for actor: IOActor) throws -> EventStream<Bool> {
        typealias Listener = (stream: EventStream<Bool>, continuation: EventStream<Bool>.Continuation)
        let actorID = actor.objectID
        let (listener, id) = try self.state.withLock { state -> (Listener, Int?) in
            let controller = try Self.check(actor, in: state)
            let listener = EventStream<Bool>.makeStream(
                bufferingNewest: controller.communication.configuration.observerBufferSize
            )
            guard !state.isStopped else { return (listener, nil) }
            let id = state.makeID()
            state.items[actorID]?.association.add(listener.continuation, id: id)
            return (listener, id)
        }
        guard let id else {
            listener.continuation.finish()
            return listener.stream
        }
        listener.continuation.onTermination { [weak self] in
            self?.state.withLock { $0.items[actorID]?.association.remove(id) }
        }
        return listener.stream
    }

    /// The IO values for `actor`, from every IO source associated with it, as they arrive from now on.
    ///
    /// Returns without suspending. The stream finishes when the consumer stops or the agent stops.
    /// An actor that does not use raw IO values (`useRawIoValues` not `true`) gets only values whose
    /// payload parses as JSON (`IOValueEvent.value`); any other payload is dropped and reported on
    /// `CommunicationManager.observeDiagnostics()` as an invalid inbound event, as coaty-js drops a
    /// value it cannot parse. An actor that uses raw IO values gets every payload as it is
    /// (`IOValueEvent.payload`). Each call gets every value; values that arrive while nobody observes
    /// them are dropped.
    ///
    /// - Throws: `CommunicationError` with code `.notRunning` before the container initialised the
    ///   controller, or `.invalidArgument` if `actor` is in none of this agent's IO nodes.
    public func observeIOValues(for actor: IOActor) throws -> EventStream<IOValueEvent> {
        typealias Listener = (stream: EventStream<IOValueEvent>, continuation: EventStream<IOValueEvent>.Continuation)
        let actorID = actor.objectID
        let (listener, id) = try self.state.withLock { state -> (Listener, Int?) in
            let controller = try Self.check(actor, in: state)
            let listener = EventStream<IOValueEvent>.makeStream(
                bufferingNewest: controller.communication.configuration.observerBufferSize
            )
            guard !state.isStopped else { return (listener, nil) }
            let id = state.makeID()
            state.items[actorID]?.valueListeners[id] = listener.continuation
            return (listener, id)
        }
        guard let id else {
            // After the agent has stopped no value comes any more: end the stream now.
            listener.continuation.finish()
            return listener.stream
        }
        listener.continuation.onTermination { [weak self] in
            self?.state.withLock { _ = $0.items[actorID]?.valueListeners.removeValue(forKey: id) }
        }
        return listener.stream
    }

    // MARK: Associations

    /// The controller's context, once `actor` is known to be one of this agent's.
    private static func check(_ actor: IOActor, in state: State) throws -> ControllerContext {
        guard let controller = state.controller else {
            throw CommunicationError(.notRunning, "the controller has not been initialised by a container")
        }
        guard state.items[actor.objectID] != nil else {
            throw CommunicationError(.invalidArgument, "IO actor \(actor.objectID) is in none of this agent's IO nodes")
        }
        return controller
    }

    /// Applies an Associate to the actor it names: starts observing a new route (returning once the
    /// subscription is in place) or releases one that lost its last source, then tells the
    /// association's observers.
    ///
    /// A received Associate's route need only be non-empty, as in coaty-js; one that is not a topic
    /// name (a `+` or `#`, say) cannot be observed, so the event is ignored with a warning and the
    /// actor's associations stay as they were. Throwing here would end the loop that applies every
    /// later Associate of the context.
    private func take(_ associate: AssociateEvent, controller: ControllerContext) async {
        let actorID = associate.ioActorID
        if let route = associate.associatingRoute, !IOValueEvent.isValidRoute(route) {
            controller.logger.warning(
                "\(controller.controllerName): ignoring an Associate of actor \(actorID) on route '\(route)', "
                    + "which is not a valid topic name"
            )
            return
        }
        typealias Change = (added: String?, released: WorkHandle?, token: Int, usesRawValues: Bool)
        let change = self.state.withLock { state -> Change? in
            guard var item = state.items[actorID], !state.isStopped,
                associate.ioContextName.utf8.elementsEqual(item.contextName.utf8)
            else { return nil }
            let change = item.routes.associate(associate.ioSourceID, on: associate.associatingRoute)
            let token = state.makeID()
            if let route = change.added { item.tokens[route] = token }
            state.items[actorID] = item
            return (change.added, change.released, token, item.usesRawValues)
        }
        guard let change else { return }
        change.released?.cancel()
        var work: (handle: WorkHandle, route: String)?
        if let route = change.added {
            // Cannot throw: the route was checked above as observeIOValue checks it.
            guard let values = try? await controller.communication.observeIOValue(route: route) else { return }
            let handle = controller.spawn { [weak self] in
                for await value in values {
                    // An actor that takes JSON gets only values that parse as JSON (coaty-js drops others).
                    guard change.usesRawValues || value.isJSON else {
                        Self.reportInvalidJSON(value, for: actorID, on: route, controller: controller)
                        continue
                    }
                    self?.forward(value, to: actorID, on: route, token: change.token)
                }
            }
            work = (handle, route)
        }
        let isStopped = self.state.withLock { state in
            guard !state.isStopped, var item = state.items[actorID] else { return true }
            if let work { item.routes.started(work.handle, for: work.route) }
            item.association.set(item.routes.hasAssociations)
            state.items[actorID] = item
            return false
        }
        if isStopped { work?.handle.cancel() }
    }

    /// Hands a value to the observers of `actorID` if `route` is still observed for it by the work
    /// that carries `token`.
    private func forward(_ value: IOValueEvent, to actorID: ObjectID, on route: String, token: Int) {
        self.state.withLock { state in
            guard let item = state.items[actorID], item.routes.isObserving(route), item.tokens[route] == token else {
                return
            }
            // Yielding only buffers or resumes the consumer: it never runs a termination handler.
            for listener in item.valueListeners.values { listener.yield(value) }
        }
    }

    /// Reports a value dropped because it is not JSON and `actorID` does not use raw IO values.
    private static func reportInvalidJSON(
        _ value: IOValueEvent,
        for actorID: ObjectID,
        on route: String,
        controller: ControllerContext
    ) {
        controller.communication.report(
            .init(
                kind: .invalidInboundEvent,
                topic: route,
                reason: "IO value of \(value.payload.count) bytes for IO actor \(actorID) is not valid JSON, "
                    + "and the actor does not use raw IO values; dropped"
            )
        )
    }
}
