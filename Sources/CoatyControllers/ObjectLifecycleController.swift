public import CoatyCommunication
import CoatyCore
public import CoatyModel
import Synchronization

/// Tracks agents or objects of a type as they come and go, and makes objects of this agent
/// discoverable (coaty-js `ObjectLifecycleController`).
///
/// Tracking publishes a Discover for the type and merges its Resolves with the Advertise and
/// Deadvertise events of the type: an object is *added* when first seen, *changed* when advertised
/// again with different content (compared as JSON), and *removed* when deadvertised — and so is every
/// tracked object whose `parentObjectID` is a deadvertised id (one level), which is how the objects
/// of an agent disappear when its identity is deadvertised or its last will arrives.
///
/// Each tracking stream keeps every object it has seen until it is deadvertised, as coaty-js's
/// registry does: there is no limit, so an agent that advertises ever new objects without
/// deadvertising them grows it. Track with a `where` predicate, or by object type, to bound what is kept.
///
/// ```swift
/// let lifecycle = ObjectLifecycleController()
/// // … in a container with [lifecycle], once started:
/// for await change in try await lifecycle.observeObjectLifecycleInfo(coreType: .identity) {
///     print("agents added:", change.added.map(\.name), "removed:", change.removed.map(\.name))
/// }
/// ```
public final class ObjectLifecycleController: Controller {
    private struct State {
        var context: ControllerContext?
        var discoverables: [ObjectID: CoatyObject] = [:]
        var isResolving = false
    }

    private let state = Mutex(State())

    /// Creates the controller; add it to a ``Container``.
    public init() {}

    public func onInit(context: ControllerContext) async throws {
        self.state.withLock { $0.context = context }
    }

    // MARK: Tracking

    /// Tracks the objects of a core type (by default the agents: `Identity`).
    ///
    /// Returns once the Advertise, Deadvertise and Resolve subscriptions are in place and the
    /// Discover has been published. The stream yields one ``ObjectLifecycleInfo`` per change and
    /// finishes when the consumer stops or the container shuts down (at once if it already has).
    ///
    /// - Parameters:
    ///   - coreType: The core type to track.
    ///   - predicate: Only objects for which it returns `true` are tracked.
    /// - Throws: `CommunicationError` with code `.notRunning` before the container initialised the
    ///   controller.
    public func observeObjectLifecycleInfo(
        coreType: CoreType = .identity,
        where predicate: @escaping @Sendable (CoatyObject) -> Bool = { _ in true }
    ) async throws -> EventStream<ObjectLifecycleInfo> {
        let context = try self.requireContext()
        return try await self.track(
            context: context,
            discover: try DiscoverEvent.byCoreTypes([coreType]),
            advertises: context.communication.advertiseRoute(coreType: coreType),
            matches: { $0.coreType == coreType && predicate($0) }
        )
    }

    /// Tracks the objects of an object type, for example `"com.example.Light"`.
    ///
    /// See ``observeObjectLifecycleInfo(coreType:where:)``.
    ///
    /// - Throws: `CommunicationError` for an invalid object type or before initialisation.
    public func observeObjectLifecycleInfo(
        objectType: String,
        where predicate: @escaping @Sendable (CoatyObject) -> Bool = { _ in true }
    ) async throws -> EventStream<ObjectLifecycleInfo> {
        let context = try self.requireContext()
        return try await self.track(
            context: context,
            discover: try DiscoverEvent.byObjectTypes([objectType]),
            advertises: try context.communication.advertiseRoute(objectType: objectType),
            matches: { $0.objectType == objectType && predicate($0) }
        )
    }

    /// Tracks the objects `matches` accepts through Advertise, Deadvertise and the Resolves to
    /// `discover`.
    ///
    /// Every event is applied to the registry where the manager decodes it, in the order it arrived:
    /// three tasks consuming three streams could apply a Deadvertise before a Resolve or Advertise of
    /// the same object that arrived earlier, and the object would then come back after it had left
    /// and never leave again.
    private func track(
        context: ControllerContext,
        discover: DiscoverEvent,
        advertises advertiseRoute: EventRoute<AdvertiseEvent>,
        matches: @escaping @Sendable (CoatyObject) -> Bool
    ) async throws -> EventStream<ObjectLifecycleInfo> {
        let manager = context.communication
        let registry = LifecycleRegistry()
        let (stream, continuation) = EventStream<ObjectLifecycleInfo>.makeStream(
            bufferingNewest: manager.configuration.observerBufferSize
        )
        let emit: @Sendable (ObjectLifecycleInfo) -> Void = { [weak manager] info in
            guard !info.isEmpty, case .dropped = continuation.yield(info) else { return }
            manager?.report(
                .init(
                    kind: .droppedEvent,
                    topic: advertiseRoute.filter.rawValue,
                    reason: "object lifecycle buffer full; oldest change dropped"
                )
            )
        }
        // The three observations deliver nothing themselves; they apply what they receive.
        let deadvertiseRoute = manager.deadvertiseRoute()
        let advertises: EventStream<Never> = await manager.observe(filter: advertiseRoute.filter) { delivery in
            if let event = advertiseRoute.select(delivery), matches(event.object) { emit(registry.saw(event.object)) }
            return nil
        }
        let deadvertises: EventStream<Never> = await manager.observe(filter: deadvertiseRoute.filter) { delivery in
            if let event = deadvertiseRoute.select(delivery) { emit(registry.gone(event.objectIDs)) }
            return nil
        }
        let resolves: EventStream<Never> = try await manager.discover(discover) { resolve in
            if let object = resolve.object, matches(object) { emit(registry.saw(object)) }
            return nil
        }
        // The observations finish when the manager stops; then so does the tracking.
        let handle = context.spawn {
            for await _ in advertises {}
            continuation.finish()
        }
        // Holding the observations until the tracking ends keeps their subscriptions.
        continuation.onTermination {
            handle.cancel()
            withExtendedLifetime((advertises, deadvertises, resolves)) {}
        }
        // After the container has shut down nothing runs the loop above: end the tracking now.
        if handle.signal.isFired { continuation.finish() }
        return stream
    }

    // MARK: Discoverable objects

    /// Advertises `object` with this agent's identity as its parent, and from now on resolves Discovers
    /// for its object id or for its object type (types-only Discovers), as coaty-js does.
    ///
    /// - Returns: The advertised object: a copy of `object` whose `parentObjectID` is the agent identity.
    /// - Throws: `CommunicationError` before initialisation or for an invalid object; an encoding or
    ///   decoding error if the copy cannot be made.
    @discardableResult
    public func advertiseDiscoverableObject(_ object: CoatyObject) async throws -> CoatyObject {
        let context = try self.requireContext()
        let copy = try object.copied(
            parent: context.identity.objectID,
            family: context.communication.configuration.objectFamily
        )
        let startResponder = self.state.withLock { state -> Bool in
            state.discoverables[copy.objectID] = copy
            defer { state.isResolving = true }
            return !state.isResolving
        }
        if startResponder { await self.startResolving(context) }
        try await context.communication.publish(AdvertiseEvent(copy))
        return copy
    }

    /// Advertises a new version of a discoverable object (same object id) and answers Discovers with it.
    ///
    /// - Throws: `CommunicationError` for an invalid object.
    public func readvertiseDiscoverableObject(_ object: CoatyObject) throws {
        let context = try self.requireContext()
        self.state.withLock { $0.discoverables[object.objectID] = object }
        try context.communication.publishWithoutWaiting(AdvertiseEvent(object))
    }

    /// Deadvertises a discoverable object and stops resolving Discovers for it.
    ///
    /// - Throws: `CommunicationError` before initialisation.
    public func deadvertiseDiscoverableObject(_ objectID: ObjectID) throws {
        let context = try self.requireContext()
        self.state.withLock { _ = $0.discoverables.removeValue(forKey: objectID) }
        try context.communication.publishWithoutWaiting(DeadvertiseEvent(objectIDs: [objectID]))
    }

    private func startResolving(_ context: ControllerContext) async {
        let discovers = await context.communication.observeDiscover()
        context.spawn { [weak self] in
            for await discover in discovers {
                guard let self else { return }
                let objects = self.state.withLock { Array($0.discoverables.values) }
                for object in objects where Self.answers(discover, with: object) {
                    try? discover.resolve(ResolveEvent(object: object))
                }
            }
        }
    }

    /// Whether a discoverable object answers a Discover: by object id, or a types-only Discover naming
    /// its object type.
    static func answers(_ discover: DiscoverEvent, with object: CoatyObject) -> Bool {
        if discover.isDiscoveringObjectID { return discover.objectID == object.objectID }
        if discover.isDiscoveringTypes { return discover.objectTypes?.contains(object.objectType) == true }
        return false
    }

    private func requireContext() throws -> ControllerContext {
        guard let context = self.state.withLock({ $0.context }) else {
            throw CommunicationError(.notRunning, "the controller has not been initialised by a container")
        }
        return context
    }
}

/// The objects one tracking stream knows, keyed by id, with their JSON for change detection.
final class LifecycleRegistry: Sendable {
    private let objects = Mutex<[ObjectID: (object: CoatyObject, json: AnyCodable?)]>([:])

    func saw(_ object: CoatyObject) -> ObjectLifecycleInfo {
        let json = try? object.jsonValue
        return self.objects.withLock { objects in
            guard let known = objects[object.objectID] else {
                objects[object.objectID] = (object, json)
                return ObjectLifecycleInfo(added: [object])
            }
            guard known.json != json else { return ObjectLifecycleInfo() }
            objects[object.objectID] = (object, json)
            return ObjectLifecycleInfo(changed: [object])
        }
    }

    func gone(_ ids: [ObjectID]) -> ObjectLifecycleInfo {
        let gone = Set(ids)
        return self.objects.withLock { objects in
            let removed = objects.values.filter { entry in
                gone.contains(entry.object.objectID) || entry.object.parentObjectID.map(gone.contains) == true
            }
            for entry in removed { objects.removeValue(forKey: entry.object.objectID) }
            return ObjectLifecycleInfo(removed: removed.map(\.object).sorted { $0.objectID < $1.objectID })
        }
    }
}
