import CoatyCommunication
import CoatyControllers
import CoatyModel
import Synchronization

/// Tells what the router decides: it observes the Associate events of the home's IO context, which the
/// router's own agent receives like any other, and names the IO points from the router's nodes.
final class RouterLog: Controller {
    /// How many associations are in force after each Associate; finishes when the agent stops.
    let activeCounts: AsyncStream<Int>

    private let router: IORouter
    private let narrator: Narrator
    private let countsContinuation: AsyncStream<Int>.Continuation
    /// The associations in force, and the names of the IO points seen so far (a node may be gone by
    /// the time its associations end).
    private let state = Mutex<(active: Set<[ObjectID]>, names: [ObjectID: String])>(([], [:]))

    init(router: IORouter, narrator: Narrator) {
        self.router = router
        self.narrator = narrator
        (self.activeCounts, self.countsContinuation) = AsyncStream.makeStream()
    }

    /// Observes the Associates before the agent connects, so that none is missed.
    func onInit(context: ControllerContext) async throws {
        let associates = try await context.communication.observeAssociate(ioContextName: Home.contextName)
        context.spawn { [self] in
            defer { self.countsContinuation.finish() }
            for await associate in associates {
                let (source, actor, count) = self.record(associate)
                if let route = associate.associatingRoute {
                    self.narrator.event("router", "Associate", "\(source) → \(actor) on \(route)")
                } else {
                    self.narrator.event("router", "Associate", "\(source) ↛ \(actor): association ended")
                }
                self.countsContinuation.yield(count)
            }
        }
    }

    /// Notes an Associate; returns the names of its IO points and how many associations are in force.
    private func record(_ associate: AssociateEvent) -> (source: String, actor: String, active: Int) {
        let nodes = self.router.managedNodes
        return self.state.withLock { state in
            for node in nodes {
                for source in node.ioSources ?? [] { state.names[source.objectID] = source.name }
                for actor in node.ioActors ?? [] { state.names[actor.objectID] = actor.name }
            }
            let pair = [associate.ioSourceID, associate.ioActorID]
            if associate.associatingRoute == nil {
                state.active.remove(pair)
            } else {
                state.active.insert(pair)
            }
            func name(_ id: ObjectID) -> String { state.names[id] ?? String(id.rawValue.prefix(8)) }
            return (name(associate.ioSourceID), name(associate.ioActorID), state.active.count)
        }
    }
}
