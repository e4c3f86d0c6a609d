import CoatyCommunication
import CoatyCore
public import CoatyModel
import Synchronization

/// Routes IO values in one IO context: it associates the compatible IO sources and IO actors of the
/// agents' IO nodes by publishing Associate events (coaty-js `IoRouter`, `RuleBasedIoRouter` and
/// `BasicIoRouter` in one controller).
///
/// The router manages the IO nodes named like its context: those advertised (agents advertise their
/// `CommunicationManager.Configuration.ioNodes` with their identity) and those that answer its
/// Discover when it starts. A node goes when it is deadvertised (an agent deadvertises its nodes with
/// its identity, also through its last will) or advertised again without sources and actors.
///
/// Whenever the managed nodes, the rules or the context change, every IO source and IO actor whose
/// value types are compatible (by default: equal value types and equal data formats, raw or JSON)
/// is offered to the ``Rule``s. The first rule for the source's value type that accepts the pair
/// associates it; global rules (no value type) apply only to value types without rules of their own.
/// The default rule, ``Rule/anyCompatible``, accepts every compatible pair, as coaty-js's
/// `BasicIoRouter` does. An association names the source's route (its `externalRoute`, or
/// `coaty/3/<namespace>/IOV/<sourceId>`) and the largest update rate that the source or any of its
/// associated actors asks for, rounded up to whole milliseconds. Associations that no rule wants any
/// more are ended (an Associate without route); all of them end when the router stops.
///
/// The router also advertises its context (with this agent's identity as parent), resolves
/// Discovers for it, and takes Updates of it: the updated context replaces its own, the rules are
/// evaluated again, and the Update is completed with the context.
///
/// ```swift
/// let router = IORouter(context: IOContext(name: "Kitchen"), rules: [
///     .init(name: "Displays show the temperature", valueType: "com.example.Temperature") { candidate in
///         candidate.actorNode.characteristics?["isDisplay"] == true
///     },
/// ])
/// // … a container with [router] routes every agent's IO nodes named "Kitchen".
/// ```
///
/// Rule conditions and the compatibility check run while the router holds its lock: they must be quick
/// and must not call the router.
public final class IORouter: Controller {
    /// A rule that decides whether a compatible IO source and IO actor are associated.
    public struct Rule: Sendable {
        /// A name, for logs.
        public var name: String
        /// The value type the rule applies to; `nil` or empty for a global rule, which applies to
        /// value types that no rule names.
        public var valueType: String?
        /// Whether to associate the pair.
        public var condition: @Sendable (Candidate) -> Bool

        /// Creates a rule.
        public init(name: String, valueType: String? = nil, condition: @escaping @Sendable (Candidate) -> Bool) {
            self.name = name
            self.valueType = valueType
            self.condition = condition
        }

        /// Associates every compatible pair (coaty-js `BasicIoRouter`'s rule).
        public static let anyCompatible = Rule(name: "Any association on compatible value types") { _ in true }
    }

    /// A compatible IO source and IO actor, with their nodes and the router's context, for a rule.
    public struct Candidate: Sendable {
        /// The IO source.
        public let source: IOSource
        /// The IO node the source belongs to.
        public let sourceNode: IONode
        /// The IO actor.
        public let actor: IOActor
        /// The IO node the actor belongs to.
        public let actorNode: IONode
        /// The router's IO context as it is now.
        public let context: IOContext
    }

    /// An association in force.
    public struct Association: Sendable, Hashable {
        /// The IO source.
        public let ioSourceID: ObjectID
        /// The IO actor.
        public let ioActorID: ObjectID
        /// The route the source publishes on and its actors observe.
        public let route: String
        /// The recommended update rate in milliseconds.
        public let updateRate: Int?
    }

    /// Whether an IO source and an IO actor may be associated at all: equal value types, and both raw
    /// or both JSON values (coaty-js `IoRouter.areValueTypesCompatible`).
    public static let valueTypesMatch: @Sendable (IOSource, IOActor) -> Bool = { source, actor in
        source.valueType.utf8.elementsEqual(actor.valueType.utf8)
            && (source.useRawIoValues ?? false) == (actor.useRawIoValues ?? false)
    }

    private struct State {
        var controller: ControllerContext?
        var table: IORoutingTable?
        /// The rules until the table exists.
        var rules: [Rule]
        /// The observations and the Discover handler; released when the router stops.
        var observations: [EventStream<Never>] = []
        var registrations: [EventHandlerRegistration] = []
    }

    private let initialContext: IOContext
    private let areCompatible: @Sendable (IOSource, IOActor) -> Bool
    private let state: Mutex<State>

    /// Creates a router for an IO context; add it to a ``Container``.
    ///
    /// - Parameters:
    ///   - context: The IO context. Its name must be a valid event filter (no `/`, `+`, `#`).
    ///   - rules: The association rules; by default ``Rule/anyCompatible``.
    ///   - areCompatible: Whether a source and an actor may be associated at all; by default
    ///     ``valueTypesMatch``.
    public init(
        context: IOContext,
        rules: [Rule] = [.anyCompatible],
        areCompatible: @escaping @Sendable (IOSource, IOActor) -> Bool = IORouter.valueTypesMatch
    ) {
        self.initialContext = context
        self.state = Mutex(State(rules: rules))
        self.areCompatible = areCompatible
    }

    /// The router's IO context: the one it was created with (with this agent's identity as parent
    /// once initialised), or the latest Update of it.
    public var context: IOContext { self.state.withLock { $0.table?.context } ?? self.initialContext }

    /// The IO nodes the router manages, in the order they were first managed.
    public var managedNodes: [IONode] { self.state.withLock { $0.table?.managedNodes ?? [] } }

    /// The associations in force, in the order they were made.
    public var associations: [Association] { self.state.withLock { $0.table?.associations ?? [] } }

    /// Replaces the rules and, once the router has started, evaluates them.
    public func defineRules(_ rules: [Rule]) {
        self.state.withLock { $0.rules = rules }
        self.apply { table, _ in table.rulesDefined(rules) }
    }

    // MARK: Lifecycle

    /// Checks the context and registers the observations, so that they are in place when the agent
    /// connects.
    ///
    /// - Throws: `CommunicationError` with code `.invalidArgument` if the context name is not a valid
    ///   event filter.
    public func onInit(context controller: ControllerContext) async throws {
        let manager = controller.communication
        try EventValidation.checkFilterName(self.initialContext.name, "IO context name")
        let ioContext = try Self.owned(self.initialContext, by: controller)
        self.state.withLock { state in
            state.controller = controller
            state.table = IORoutingTable(
                context: ioContext,
                namespace: manager.configuration.namespace,
                rules: state.rules,
                areCompatible: self.areCompatible
            )
        }
        let advertiseRoute = manager.advertiseRoute(coreType: .ioNode)
        let advertises: EventStream<Never> = await manager.observe(filter: advertiseRoute.filter) { [weak self] in
            if let node = advertiseRoute.select($0)?.object as? IONode {
                self?.apply { table, _ in table.nodeAdvertised(node) }
            }
            return nil
        }
        let deadvertiseRoute = manager.deadvertiseRoute()
        let deadvertises: EventStream<Never> = await manager.observe(filter: deadvertiseRoute.filter) { [weak self] in
            if let event = deadvertiseRoute.select($0) {
                self?.apply { table, _ in table.objectsDeadvertised(event.objectIDs) }
            }
            return nil
        }
        let updateRoute = manager.updateRoute(coreType: .ioContext)
        let updates: EventStream<Never> = await manager.observe(filter: updateRoute.filter) { [weak self] in
            if let update = updateRoute.select($0) { self?.take(update) }
            return nil
        }
        let discovers = await manager.handleDiscover { [weak self] discover in
            guard let ioContext = self?.state.withLock({ $0.table?.context }) else { return }
            if Self.answers(discover, with: ioContext) { try discover.resolve(ResolveEvent(object: ioContext)) }
        }
        self.state.withLock { state in
            state.observations = [advertises, deadvertises, updates]
            state.registrations = [discovers]
        }
    }

    /// Advertises the context, starts routing the nodes known so far, and discovers the IO nodes
    /// already out there.
    public func onCommunicationManagerStarting() async throws {
        guard let controller = self.state.withLock({ $0.controller }) else { return }
        self.apply { table, controller in
            try controller.communication.publishWithoutWaiting(AdvertiseEvent(table.context))
            return table.start()
        }
        let resolves: EventStream<Never> = try await controller.communication.discover(
            try DiscoverEvent.byCoreTypes([.ioNode])
        ) { [weak self] resolve in
            if let node = resolve.object as? IONode { self?.apply { table, _ in table.nodeAdvertised(node) } }
            return nil
        }
        self.state.withLock { $0.observations.append(resolves) }
    }

    /// Ends every association and releases the observations.
    public func onCommunicationManagerStopping() async {
        let (observations, registrations) = self.state.withLock { state in
            defer {
                state.observations = []
                state.registrations = []
            }
            return (state.observations, state.registrations)
        }
        for registration in registrations { registration.cancel() }
        self.apply { table, _ in table.stop() }
        withExtendedLifetime(observations) {}
    }

    // MARK: Changes

    /// Applies a change to the table and publishes the Associates it decides, under the lock, so that
    /// they go out in the order they were decided (publishing only enqueues); then runs `afterwards`
    /// with the changed table, so that what it publishes follows the Associates. A change that throws is
    /// logged.
    private func apply(
        _ change: (inout IORoutingTable, ControllerContext) throws -> [IORoutingTable.Output],
        afterwards: ((IORoutingTable) throws -> Void)? = nil
    ) {
        self.state.withLock { state in
            guard var table = state.table, let controller = state.controller else { return }
            do {
                let outputs = try change(&table, controller)
                for output in outputs {
                    try controller.communication.publishWithoutWaiting(
                        AssociateEvent(
                            ioContextName: table.context.name,
                            ioSourceID: output.sourceID,
                            ioActorID: output.actorID,
                            associatingRoute: output.route,
                            updateRate: output.updateRate
                        )
                    )
                }
                try afterwards?(table)
            } catch {
                controller.logger.error("IO router of context \(table.context.name): \(error)")
            }
            state.table = table
        }
    }

    /// Takes an Update of the context: the updated context (with this agent as parent) replaces the
    /// router's and is advertised, the rules are evaluated again, and then the Update is completed.
    ///
    /// The Complete goes out after the Associates of the new evaluation, as in coaty-js
    /// (`IoRouter._observeUpdateIoContext` calls `onIoContextChanged`, which advertises and evaluates,
    /// before `update.complete`): a requester that acts on the Complete, such as an IO source's agent
    /// publishing its next value, has already received the associations the update brought about.
    private func take(_ update: UpdateEvent) {
        guard let updated = update.object as? IOContext else { return }
        self.apply(
            { table, controller in
                guard updated.objectID == table.context.objectID else { return [] }
                let ioContext = try Self.owned(updated, by: controller)
                let outputs = table.contextChanged(ioContext)
                try controller.communication.publishWithoutWaiting(AdvertiseEvent(ioContext))
                return outputs
            },
            afterwards: { table in
                // Only an Update of this router's context was taken (a failed change skips this step).
                guard updated.objectID == table.context.objectID else { return }
                try update.complete(CompleteEvent(table.context))
            }
        )
    }

    /// A copy of `ioContext` whose parent is this agent's identity, as coaty-js sets it.
    private static func owned(_ ioContext: IOContext, by controller: ControllerContext) throws -> IOContext {
        let copy = try ioContext.copied(
            parent: controller.identity.objectID,
            family: controller.communication.configuration.objectFamily
        )
        guard let copy = copy as? IOContext else {
            throw CommunicationError(
                .invalidArgument,
                "the IO context \(ioContext.objectID) does not decode as an IOContext"
            )
        }
        return copy
    }

    /// Whether a Discover asks for the context: as for any discoverable object (by object id, or
    /// types-only by object type), and also types-only by core type, as coaty-js's router answers.
    static func answers(_ discover: DiscoverEvent, with ioContext: IOContext) -> Bool {
        ObjectLifecycleController.answers(discover, with: ioContext)
            || (discover.isDiscoveringTypes && discover.isCoreTypeCompatible(.ioContext))
    }
}
