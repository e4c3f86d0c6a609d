public import CoatyModel
import Synchronization

/// Hands an IO actor the values of whatever IO sources are associated with it, across association
/// changes (coaty-js `IoActorController` and `CommunicationManager.observeIoValue(actor)`).
///
/// The actor must be in one of this agent's IO nodes (`CommunicationManager.Configuration.ioNodes`):
/// the controller follows the Associate events of that node's IO context, observes each route the
/// actor is associated on, and stops observing a route once no source is associated with the actor on
/// it any more.
///
/// ```swift
/// let actors = IOActorController()
/// // … in a container with [actors], an IONode holding `display`:
/// for await value in try await actors.observeIOValues(for: display) {
///     print(value.value?.doubleValue ?? .nan)
/// }
/// ```
public final class IOActorController: Controller {
    private let context = Mutex<ControllerContext?>(nil)

    /// Creates the controller; add it to a ``Container``.
    public init() {}

    public func onInit(context: ControllerContext) async throws {
        self.context.withLock { $0 = context }
    }

    /// The IO values for `actor`, from every IO source associated with it, as they arrive.
    ///
    /// Returns once the Associate subscription is in place. The stream finishes when the consumer stops
    /// or the container shuts down. Values are JSON or raw bytes as the source publishes them
    /// (``IOValueEvent/value`` or ``IOValueEvent/payload``).
    ///
    /// - Throws: ``CommunicationError`` with code `.notRunning` before the container initialised the
    ///   controller, or `.invalidArgument` if `actor` is in none of this agent's IO nodes.
    public func observeIOValues(for actor: IOActor) async throws -> EventStream<IOValueEvent> {
        guard let controller = self.context.withLock({ $0 }) else {
            throw CommunicationError(.notRunning, "the controller has not been initialised by a container")
        }
        let manager = controller.communication
        guard
            let node = manager.configuration.ioNodes.first(where: { node in
                (node.ioActors ?? []).contains { $0.objectID == actor.objectID }
            })
        else {
            throw CommunicationError(.invalidArgument, "IO actor \(actor.objectID) is in none of this agent's IO nodes")
        }
        let associations = try await manager.observeAssociate(ioContextName: node.name)
        let (stream, continuation) = EventStream<IOValueEvent>.makeStream(
            bufferingNewest: manager.configuration.observerBufferSize
        )
        let routing = controller.spawn {
            var routes = ActorRoutes()
            defer {
                for work in routes.removeAll() { work.cancel() }
                continuation.finish()
            }
            for await associate in associations where associate.ioActorID == actor.objectID {
                let change = routes.associate(associate.ioSourceID, on: associate.associatingRoute)
                change.released?.cancel()
                if let route = change.added {
                    let values = try await manager.observeIOValue(route: route)
                    routes.started(
                        controller.spawn { for await value in values { _ = continuation.yield(value) } },
                        for: route
                    )
                }
            }
        }
        continuation.onTermination { routing.cancel() }
        // After the container has shut down nothing runs the loop above: end the stream now.
        if routing.signal.isFired { continuation.finish() }
        return stream
    }
}

/// The routes one IO actor is associated on: which sources use each, and the work that observes it.
struct ActorRoutes {
    private var routeOfSource: [ObjectID: String] = [:]
    private var sourcesOnRoute: [String: Set<ObjectID>] = [:]
    private var work: [String: WorkHandle] = [:]

    /// Records that `source` is associated on `route` (`nil`: disassociated). Returns the route to start
    /// observing, if it is new, and the work to stop, if a route lost its last source.
    mutating func associate(_ source: ObjectID, on route: String?) -> (added: String?, released: WorkHandle?) {
        let previous = self.routeOfSource[source]
        guard previous != route else { return (nil, nil) }
        var released: WorkHandle?
        if let previous {
            self.sourcesOnRoute[previous]?.remove(source)
            if self.sourcesOnRoute[previous]?.isEmpty == true {
                self.sourcesOnRoute[previous] = nil
                released = self.work.removeValue(forKey: previous)
            }
        }
        self.routeOfSource[source] = route
        guard let route else { return (nil, released) }
        let isNew = self.sourcesOnRoute[route] == nil
        self.sourcesOnRoute[route, default: []].insert(source)
        return (isNew ? route : nil, released)
    }

    /// Keeps the work observing `route`.
    mutating func started(_ work: WorkHandle, for route: String) {
        self.work[route] = work
    }

    /// Forgets everything and returns the work to stop.
    mutating func removeAll() -> [WorkHandle] {
        defer { self = ActorRoutes() }
        return Array(self.work.values)
    }
}
