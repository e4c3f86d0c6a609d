import CoatyCommunication
import CoatyControllers
import CoatyModel
import CoatyTransport
import Synchronization

/// `coaty router`: an IO router agent (an `IORouter` with its default rule) for one IO context.
enum RouterCommand {
    /// Joins through `transport` as an agent running an `IORouter` for the context, and writes one line
    /// to `output` for each Associate of the context (its own and any other router's) until `count`
    /// were shown or the task is cancelled; then leaves, which ends the router's associations.
    ///
    /// The agent reconnects when the broker goes away, as every agent does, so a router keeps routing
    /// across broker restarts.
    ///
    /// - Throws: ``CLIError`` saying why, if the agent cannot join (see ``JoinFailure``).
    static func run(
        _ options: RouterOptions,
        transport: any Transport,
        output: @escaping @Sendable (String) -> Void
    ) async throws {
        let router = IORouter(context: IOContext(name: options.context))
        let log = AssociateObserver(contextName: options.context)
        try await AgentSession.with(
            name: "coaty router",
            connection: options.connection,
            transport: transport,
            controllers: [log, router]
        ) { _ in
            guard let associations = log.associations else { return }
            output("routing IO context '\(options.context)' in namespace '\(options.connection.namespace)'")
            var names = PointNames()
            var shown = 0
            for await associate in associations {
                names.learn(router.managedNodes)
                output(names.describe(associate))
                shown += 1
                if let count = options.count, shown >= count { break }
            }
        }
    }
}

/// Observes the Associate events of a context from `onInit`, so that the subscription is in place when
/// the agent joins, before the router can associate anything.
private final class AssociateObserver: Controller {
    let contextName: String
    private let stream = Mutex<EventStream<AssociateEvent>?>(nil)

    init(contextName: String) { self.contextName = contextName }

    var associations: EventStream<AssociateEvent>? { self.stream.withLock { $0 } }

    func onInit(context: ControllerContext) async throws {
        let associations = try await context.communication.observeAssociate(ioContextName: self.contextName)
        self.stream.withLock { $0 = associations }
    }
}

/// The names of the IO points seen in managed nodes, kept after their nodes go, for readable lines.
struct PointNames {
    private var names: [ObjectID: String] = [:]

    mutating func learn(_ nodes: [IONode]) {
        for node in nodes {
            for source in node.ioSources ?? [] { self.names[source.objectID] = source.name }
            for actor in node.ioActors ?? [] { self.names[actor.objectID] = actor.name }
        }
    }

    /// `associate    Thermometer (6666…) → Display (7777…)  on <route>  every 250 ms`, or
    /// `disassociate …` without route.
    func describe(_ associate: AssociateEvent) -> String {
        let pair = "\(self.name(associate.ioSourceID)) → \(self.name(associate.ioActorID))"
        guard let route = associate.associatingRoute else { return "disassociate \(pair)" }
        return "associate    \(pair)  on \(route)" + (associate.updateRate.map { "  every \($0) ms" } ?? "")
    }

    private func name(_ id: ObjectID) -> String {
        let short = "\(id.rawValue.prefix(8))…"
        return self.names[id].map { "\($0) (\(short))" } ?? short
    }
}
