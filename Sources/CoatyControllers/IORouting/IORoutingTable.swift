import CoatyCommunication
import CoatyModel

/// What an ``IORouter`` decides, without any I/O: the IO nodes it manages, the associations in force,
/// and the Associate events to publish when either the nodes, the rules or the context change.
///
/// It follows coaty-js's `IoRouter` and `RuleBasedIoRouter` step by step: an IO source and an IO actor
/// are candidates when their value types (and data formats) are compatible; the first rule for the
/// source's value type that accepts a candidate associates it (rules for the value type take
/// precedence over global ones); every actor of a source gets the source's cumulated update rate (the
/// largest rate asked for); the associations in force are then changed into the wanted ones, in the
/// order coaty-js publishes them: current associations first (dropped, or associated again when their
/// rate changed), then the new ones. Each source keeps one route while it is managed, so that all its
/// actors listen where it publishes.
struct IORoutingTable {
    /// An Associate to publish: `route` `nil` disassociates.
    struct Output: Equatable {
        var sourceID: ObjectID
        var actorID: ObjectID
        var route: String?
        var updateRate: Int?
    }

    private struct Association {
        var source: IOSource
        var actor: IOActor
        var rate: Double?
    }

    private(set) var context: IOContext
    let namespace: String
    private(set) var rules: [IORouter.Rule]
    let areCompatible: @Sendable (IOSource, IOActor) -> Bool

    /// The managed nodes by id, and their ids in the order first managed (coaty-js's `Map` order).
    private var nodes: [ObjectID: IONode] = [:]
    private var nodeOrder: [ObjectID] = []
    /// The route of each source that has been associated, kept while its node is managed.
    private var sourceRoutes: [ObjectID: String] = [:]
    /// The associations in force, in the order they were made.
    private var current: [Association] = []
    /// Whether the router routes: before it starts and after it stops, nodes are still tracked (so that
    /// none advertised while the agent connects is missed), but nothing is associated.
    private(set) var isRouting = false

    init(
        context: IOContext,
        namespace: String,
        rules: [IORouter.Rule],
        areCompatible: @escaping @Sendable (IOSource, IOActor) -> Bool
    ) {
        self.context = context
        self.namespace = namespace
        self.rules = rules
        self.areCompatible = areCompatible
    }

    var managedNodes: [IONode] { self.nodeOrder.compactMap { self.nodes[$0] } }

    var associations: [IORouter.Association] {
        self.current.map {
            IORouter.Association(
                ioSourceID: $0.source.objectID,
                ioActorID: $0.actor.objectID,
                route: self.sourceRoutes[$0.source.objectID] ?? "",
                updateRate: Self.wireRate($0.rate)
            )
        }
    }

    // MARK: Inputs

    /// An IO node was advertised or resolved. Nodes of other IO contexts are ignored; a node without
    /// sources and actors counts as deadvertised.
    mutating func nodeAdvertised(_ node: IONode) -> [Output] {
        guard node.name.utf8.elementsEqual(self.context.name.utf8) else { return [] }
        let isEmpty = (node.ioSources ?? []).isEmpty && (node.ioActors ?? []).isEmpty
        let unmanaged = self.unmanage([node.objectID], readvertised: isEmpty ? nil : node)
        if isEmpty { return unmanaged ? self.evaluate() : [] }
        if self.nodes.updateValue(node, forKey: node.objectID) == nil { self.nodeOrder.append(node.objectID) }
        return self.evaluate()
    }

    /// Objects were deadvertised; those that are managed IO nodes are no longer.
    mutating func objectsDeadvertised(_ ids: [ObjectID]) -> [Output] {
        self.unmanage(ids, readvertised: nil) ? self.evaluate() : []
    }

    /// The IO context was updated.
    mutating func contextChanged(_ context: IOContext) -> [Output] {
        self.context = context
        return self.evaluate()
    }

    /// The rules were replaced.
    mutating func rulesDefined(_ rules: [IORouter.Rule]) -> [Output] {
        self.rules = rules
        return self.evaluate()
    }

    /// The router starts routing: the rules are evaluated over the nodes known so far.
    mutating func start() -> [Output] {
        self.isRouting = true
        return self.evaluate()
    }

    /// The router stops: every association is ended and nothing is managed any more.
    mutating func stop() -> [Output] {
        self.isRouting = false
        defer {
            self.current = []
            self.nodes = [:]
            self.nodeOrder = []
            self.sourceRoutes = [:]
        }
        return self.current.map { Output(sourceID: $0.source.objectID, actorID: $0.actor.objectID) }
    }

    /// Removes the managed nodes among `ids`, and the routes of their sources unless `readvertised`,
    /// the same node advertised again, still has them. Returns whether a node was removed for good.
    private mutating func unmanage(_ ids: [ObjectID], readvertised: IONode?) -> Bool {
        var removedForGood = false
        for id in ids {
            guard let node = self.nodes.removeValue(forKey: id) else { continue }
            self.nodeOrder.removeAll { $0 == id }
            let kept = Set((readvertised?.ioSources ?? []).map(\.objectID))
            for source in node.ioSources ?? [] where !kept.contains(source.objectID) {
                self.sourceRoutes.removeValue(forKey: source.objectID)
            }
            if readvertised == nil { removedForGood = true }
        }
        return removedForGood
    }

    // MARK: Evaluation

    private typealias Candidate = IORouter.Candidate

    /// Matches the rules against every compatible source–actor pair and turns the associations in force
    /// into the wanted ones.
    private mutating func evaluate() -> [Output] {
        guard self.isRouting else { return [] }
        var wanted: [ObjectID: [ObjectID: Association]] = [:]
        var wantedOrder: [(source: ObjectID, actor: ObjectID)] = []
        for candidate in self.candidates() where self.accepts(candidate) {
            let source = candidate.source
            let actor = candidate.actor
            if wanted[source.objectID]?[actor.objectID] == nil { wantedOrder.append((source.objectID, actor.objectID)) }
            wanted[source.objectID, default: [:]][actor.objectID] = Association(
                source: source,
                actor: actor,
                rate: Self.cumulated(source.updateRate, actor.updateRate)
            )
        }
        // Every actor of a source gets the largest rate any of them asks for.
        for (sourceID, actors) in wanted {
            let rate = actors.values.reduce(nil as Double?) { Self.cumulated($1.rate, $0) }
            for actorID in actors.keys { wanted[sourceID]?[actorID]?.rate = rate }
        }

        var outputs: [Output] = []
        var next: [Association] = []
        for association in self.current {
            let sourceID = association.source.objectID
            let actorID = association.actor.objectID
            guard let resolved = wanted[sourceID]?[actorID] else {
                outputs.append(Output(sourceID: sourceID, actorID: actorID))
                continue
            }
            if resolved.rate != association.rate { outputs.append(self.associate(resolved)) }
            next.append(resolved)
            wanted[sourceID]?[actorID] = nil
        }
        for (sourceID, actorID) in wantedOrder {
            guard let association = wanted[sourceID]?[actorID] else { continue }
            outputs.append(self.associate(association))
            next.append(association)
        }
        self.current = next
        return outputs
    }

    /// The compatible source–actor pairs of the managed nodes; a source or actor in several nodes
    /// counts once, with the node that was managed last.
    private func candidates() -> [Candidate] {
        var sources: [ObjectID: (IOSource, IONode)] = [:]
        var sourceOrder: [ObjectID] = []
        var actors: [ObjectID: (IOActor, IONode)] = [:]
        var actorOrder: [ObjectID] = []
        for node in self.managedNodes {
            for source in node.ioSources ?? [] {
                if sources.updateValue((source, node), forKey: source.objectID) == nil {
                    sourceOrder.append(source.objectID)
                }
            }
            for actor in node.ioActors ?? [] {
                if actors.updateValue((actor, node), forKey: actor.objectID) == nil {
                    actorOrder.append(actor.objectID)
                }
            }
        }
        var result: [Candidate] = []
        for sourceID in sourceOrder {
            guard let (source, sourceNode) = sources[sourceID] else { continue }
            for actorID in actorOrder {
                guard let (actor, actorNode) = actors[actorID], self.areCompatible(source, actor) else { continue }
                result.append(
                    Candidate(
                        source: source,
                        sourceNode: sourceNode,
                        actor: actor,
                        actorNode: actorNode,
                        context: self.context
                    )
                )
            }
        }
        return result
    }

    /// Whether the first applicable rule that accepts `candidate` exists: the rules for the source's
    /// value type if there are any, else the global rules.
    private func accepts(_ candidate: Candidate) -> Bool {
        let valueType = candidate.source.valueType
        var applicable = self.rules.filter { ($0.valueType ?? "").utf8.elementsEqual(valueType.utf8) }
        if applicable.isEmpty { applicable = self.rules.filter { ($0.valueType ?? "").isEmpty } }
        return applicable.contains { $0.condition(candidate) }
    }

    /// The Associate for `association`, on the source's route (made the first time it is needed).
    private mutating func associate(_ association: Association) -> Output {
        let sourceID = association.source.objectID
        let route: String
        if let known = self.sourceRoutes[sourceID] {
            route = known
        } else {
            route =
                association.source.externalRoute ?? IOValueEvent.route(namespace: self.namespace, ioSourceID: sourceID)
            self.sourceRoutes[sourceID] = route
        }
        return Output(
            sourceID: sourceID,
            actorID: association.actor.objectID,
            route: route,
            updateRate: Self.wireRate(association.rate)
        )
    }

    /// The larger of two optional rates, or the one given.
    private static func cumulated(_ a: Double?, _ b: Double?) -> Double? {
        guard let a else { return b }
        guard let b else { return a }
        return max(a, b)
    }

    /// A rate as the Associate carries it: whole milliseconds, rounded up so that a source is never
    /// asked to publish faster than its actors want.
    static func wireRate(_ rate: Double?) -> Int? {
        guard let rate, rate.isFinite, rate >= 0 else { return nil }
        return Int(exactly: min(rate.rounded(.up), 1e15))
    }
}
