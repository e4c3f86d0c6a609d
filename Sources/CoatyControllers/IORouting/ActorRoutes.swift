import CoatyCommunication
import CoatyModel

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

    /// Whether any source is associated.
    var hasAssociations: Bool { !self.routeOfSource.isEmpty }

    /// Whether `route` is observed: at least one source is associated on it.
    func isObserving(_ route: String) -> Bool {
        self.sourcesOnRoute[route] != nil
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
