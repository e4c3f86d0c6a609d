import CoatyCommunication
import CoatyCore
public import CoatyModel
import Synchronization

/// Resolves objects by id through Discover and keeps what it resolved (coaty-js `ObjectCacheController`).
///
/// ``resolveObject(_:timeout:rediscover:)`` answers from the cache; otherwise it publishes a Discover
/// for the object id and waits for the first Resolve whose object has the controller's core type and
/// passes its predicate. Concurrent calls for the same id share one Discover. Cached objects are
/// replaced when the object is advertised again, so the cache follows their changes.
///
/// Two choices differ from coaty-js, which has an abstract class whose subclasses set the core type
/// in `onInit`:
/// - the core type is a parameter with no default: coaty-js defaults to `CoatyObject`, which accepts
///   only objects whose core type *is* `CoatyObject`, a default that surprises more than it helps;
/// - a Deadvertise removes the object from the cache, where coaty-js keeps it: a deadvertised object
///   is gone, and answering later calls with it would hand out what its owner withdrew.
///
/// Resolving waits at most for its timeout (coaty-js waits for ever); a resolution that no caller
/// waits for any more is abandoned and its response subscription released. The cache holds only the
/// objects this agent asked for; ``removeObject(_:)`` and ``removeAllObjects()`` let an app bound it.
///
/// ```swift
/// let tasks = ObjectCacheController(coreType: .task)
/// // … in a container with [tasks], once started:
/// let task = try await tasks.resolveObject(taskID, timeout: .seconds(5))
/// ```
public final class ObjectCacheController: Controller {
    /// The core type of the objects it resolves and caches.
    public let coreType: CoreType
    private let predicate: @Sendable (CoatyObject) -> Bool
    private let state = Mutex(State())
    private let nextWaiterID = Atomic<UInt64>(0)

    private struct State {
        var context: ControllerContext?
        var cache: [ObjectID: CoatyObject] = [:]
        var pending: [ObjectID: Resolution] = [:]
        /// The Advertise and Deadvertise observations, held to keep their subscriptions.
        var observations: (EventStream<Never>, EventStream<Never>)?
        var isStopped = false
    }

    /// One object id being resolved: the callers waiting for it and the Discovers published for it,
    /// whose response subscriptions last as long as the resolution.
    private struct Resolution {
        /// Tells this resolution from a later one of the same object id.
        let generation: UInt64
        var waiters: [UInt64: EventStream<CoatyObject>.Continuation] = [:]
        var discovers: [EventStream<Never>] = []
    }

    /// Creates the controller; add it to a ``Container``.
    ///
    /// - Parameters:
    ///   - coreType: The core type of the objects to resolve and cache.
    ///   - predicate: Only objects for which it returns `true` are accepted (coaty-js `objectFilter`).
    public init(coreType: CoreType, where predicate: @escaping @Sendable (CoatyObject) -> Bool = { _ in true }) {
        self.coreType = coreType
        self.predicate = predicate
    }

    public func onInit(context: ControllerContext) async throws {
        let manager = context.communication
        let advertiseRoute = manager.advertiseRoute(coreType: self.coreType)
        let deadvertiseRoute = manager.deadvertiseRoute()
        // Applied where the manager decodes them, in arrival order, like the lifecycle controller's.
        let advertises: EventStream<Never> = await manager.observe(filter: advertiseRoute.filter) { [weak self] in
            if let self, let event = advertiseRoute.select($0) { self.advertised(event.object) }
            return nil
        }
        let deadvertises: EventStream<Never> = await manager.observe(filter: deadvertiseRoute.filter) { [weak self] in
            if let self, let event = deadvertiseRoute.select($0) { self.deadvertised(event.objectIDs) }
            return nil
        }
        self.state.withLock { state in
            state.context = context
            state.observations = (advertises, deadvertises)
        }
    }

    public func onCommunicationManagerStopping() async {
        // Nobody resolves anything after this: end every wait now rather than at its timeout.
        // What is taken out is released after the lock: ending a stream calls into the manager.
        let (pending, observations) = self.state.withLock { state in
            state.isStopped = true
            defer {
                state.pending = [:]
                state.observations = nil
            }
            return (state.pending.values, state.observations)
        }
        for resolution in pending {
            for waiter in resolution.waiters.values { waiter.finish() }
        }
        withExtendedLifetime(observations) {}
    }

    // MARK: Resolving

    /// The object with `objectID`: from the cache, or resolved through a Discover and then cached.
    ///
    /// A call while the same object is being resolved waits for that resolution instead of publishing
    /// another Discover, unless `rediscover` is `true` (coaty-js `shouldResolvePending`), which
    /// publishes a new one; whichever Discover is answered first resolves every waiting call.
    ///
    /// - Parameters:
    ///   - objectID: The object id.
    ///   - timeout: How long to wait for a Resolve.
    ///   - rediscover: Publish a new Discover even if one for this id is waiting for its answer.
    /// - Returns: The object, of the controller's core type and accepted by its predicate.
    /// - Throws: `CommunicationError` with code `CommunicationError.Code.timedOut` if no matching
    ///   Resolve arrived in time; with `CommunicationError.Code.notRunning` before the container
    ///   initialised the controller or once it is stopping; `CancellationError` if the task is cancelled.
    public func resolveObject(
        _ objectID: ObjectID,
        timeout: Duration,
        rediscover: Bool = false
    ) async throws -> CoatyObject {
        let (stream, continuation) = EventStream<CoatyObject>.makeStream(bufferingNewest: 1)
        let waiterID = self.nextWaiterID.wrappingAdd(1, ordering: .relaxed).oldValue
        enum Step {
            case cached(CoatyObject)
            case discover(ControllerContext, generation: UInt64)
            case wait
        }
        let step = try self.state.withLock { state throws(CommunicationError) -> Step in
            guard let context = state.context, !state.isStopped else {
                throw CommunicationError(.notRunning, "the controller is not running in a container")
            }
            if let object = state.cache[objectID] { return .cached(object) }
            let pending = state.pending[objectID]
            let generation = pending?.generation ?? waiterID
            state.pending[objectID, default: Resolution(generation: generation)].waiters[waiterID] = continuation
            return pending != nil && !rediscover ? .wait : .discover(context, generation: generation)
        }
        if case .cached(let object) = step { return object }
        // Runs at once if the resolution already ended it.
        continuation.onTermination { [weak self] in self?.removeWaiter(waiterID, of: objectID) }
        if case .discover(let context, let generation) = step {
            do {
                let responses: EventStream<Never> = try await context.communication.discover(
                    try DiscoverEvent.byObjectID(objectID)
                ) { [weak self] resolve in
                    if let self, let object = resolve.object { self.resolved(object, for: objectID) }
                    return nil
                }
                // A Resolve may already have come in (a handler answers on the publishing path), or
                // every waiter gone, and another resolution of the same id begun; then this one is
                // over and its responses are released here.
                self.state.withLock { state in
                    if state.pending[objectID]?.generation == generation {
                        state.pending[objectID]?.discovers.append(responses)
                    }
                }
            } catch {
                continuation.finish()
                throw error
            }
        }
        return try await stream.first(timeout: timeout)
    }

    /// The cached object with `objectID`, if any; publishes nothing.
    public func cachedObject(_ objectID: ObjectID) -> CoatyObject? {
        self.state.withLock { $0.cache[objectID] }
    }

    /// Removes an object from the cache; the next ``resolveObject(_:timeout:rediscover:)`` discovers it.
    public func removeObject(_ objectID: ObjectID) {
        self.state.withLock { _ = $0.cache.removeValue(forKey: objectID) }
    }

    /// Empties the cache.
    public func removeAllObjects() {
        self.state.withLock { $0.cache.removeAll() }
    }

    // MARK: Events

    private func accepts(_ object: CoatyObject) -> Bool {
        object.coreType == self.coreType && self.predicate(object)
    }

    /// A Resolve to one of this controller's Discovers: the first acceptable object ends the resolution.
    private func resolved(_ object: CoatyObject, for objectID: ObjectID) {
        guard object.objectID == objectID, self.accepts(object) else { return }
        let resolution = self.state.withLock { state -> Resolution? in
            guard let resolution = state.pending.removeValue(forKey: objectID) else { return nil }
            state.cache[objectID] = object
            return resolution
        }
        guard let resolution else { return }
        for waiter in resolution.waiters.values {
            waiter.yield(object)
            waiter.finish()
        }
    }

    /// An Advertise replaces a cached object; it does not add one nobody asked for.
    private func advertised(_ object: CoatyObject) {
        guard self.accepts(object) else { return }
        self.state.withLock { state in
            if state.cache[object.objectID] != nil { state.cache[object.objectID] = object }
        }
    }

    private func deadvertised(_ objectIDs: [ObjectID]) {
        self.state.withLock { state in
            for objectID in objectIDs { state.cache.removeValue(forKey: objectID) }
        }
    }

    /// A caller stopped waiting (answered, timed out or cancelled); a resolution nobody waits for is
    /// dropped, which releases its Discovers' response subscriptions.
    private func removeWaiter(_ waiterID: UInt64, of objectID: ObjectID) {
        let abandoned = self.state.withLock { state -> Resolution? in
            guard var resolution = state.pending[objectID],
                resolution.waiters.removeValue(forKey: waiterID) != nil
            else { return nil }
            guard resolution.waiters.isEmpty else {
                state.pending[objectID] = resolution
                return nil
            }
            state.pending[objectID] = nil
            return resolution
        }
        // Released outside the lock: ending a response stream calls into the manager.
        withExtendedLifetime(abandoned) {}
    }
}
