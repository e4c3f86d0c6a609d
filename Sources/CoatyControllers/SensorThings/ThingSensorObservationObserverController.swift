public import CoatyCommunication
import CoatyCore
public import CoatyModel
import Synchronization

/// Keeps track of the things of all agents, their sensors and the sensors' channelled observations
/// (coaty-js `ThingSensorObservationObserverController`).
///
/// From connect on, it follows things: those advertised (`ADV::coaty.sensorThings.Thing`) and, once
/// the agent is online, those resolved for a Discover of object type `coaty.sensorThings.Thing`. For
/// each thing that passes the thing filter it queries the thing's sensors (a Query for object type
/// `coaty.sensorThings.Sensor` whose `parentObjectId` is the thing's id, sent again each time the thing
/// is received) and takes the sensors of the thing advertised later (`ADV::coaty.sensorThings.Sensor`).
/// Each sensor that passes the sensor filter is registered, reported through ``sensorChanges()``, and
/// its channelled observations (`CHN:<sensor object id>`) come out of ``observations()``. Those are the
/// events coaty-js sends and subscribes.
///
/// Sensors are removed when a Deadvertise names the agent or object their thing belongs to (the
/// thing's `parentObjectID`, usually the owning agent's identity, whose Deadvertise comes when the
/// agent leaves or its connection is lost), as in coaty-js, and also (where coaty-js keeps them) when
/// it names the thing or the sensor itself, which is what a ``SensorSourceController`` sends when a
/// sensor is unregistered. On shutdown every sensor is reported removed and the streams finish.
///
/// It keeps every thing and sensor its filters accept, with one sensor query per thing and one
/// channel subscription per sensor, until they are deadvertised, as coaty-js does: there is no limit,
/// so agents that advertise ever new things grow it. Filter things and sensors to bound what is kept.
///
/// Where this differs locally from coaty-js, which subclasses `ThingObserverController` and adds a
/// `thing` property to each sensor object:
/// - a sensor comes with its thing as a ``RegisteredSensor``, and the thing and sensor filters are
///   given at initialisation; add a ``ThingObserverController`` for its requests;
/// - a thing received again replaces its earlier sensor query, where coaty-js keeps both running;
/// - a sensor is reported added once its observation subscription is in place, so an observation
///   published after the change is seen is not missed.
///
/// ```swift
/// let observer = ThingSensorObservationObserverController()
/// // … in a container with [observer]:
/// for await reading in observer.observations() {
///     print(reading.sensor.thing.name, reading.sensor.sensor.name, reading.observation.result)
/// }
/// ```
public final class ThingSensorObservationObserverController: Controller {
    /// A registered sensor and the thing it belongs to.
    public struct RegisteredSensor: Sendable {
        /// The sensor.
        public let sensor: Sensor
        /// Its thing, as last received.
        public let thing: Thing
    }

    /// A change of the registered sensors (coaty-js `RegisteredSensorsChangeInfo`).
    public struct SensorChange: Sendable {
        /// Sensors registered by this change.
        public let added: [RegisteredSensor]
        /// Sensors removed by this change.
        public let removed: [RegisteredSensor]
        /// Registered sensors received again, possibly with changed properties.
        public let changed: [RegisteredSensor]
        /// Every registered sensor after the change, in registration order.
        public let total: [RegisteredSensor]
    }

    /// An observation channelled for a registered sensor.
    public struct Reading: Sendable {
        /// The observation.
        public let observation: SensorObservation
        /// The sensor it belongs to, as registered when its observations were subscribed.
        public let sensor: RegisteredSensor
    }

    /// A thing being followed: its sensor query runs while it is known.
    private struct KnownThing {
        let thing: Thing
        let query: WorkHandle?
    }

    private struct Entry {
        let registered: RegisteredSensor
        let observations: WorkHandle
    }

    private struct State {
        var context: ControllerContext?
        var isStopped = false
        var things: [ObjectID: KnownThing] = [:]
        /// Sensor ids in registration order.
        var order: [ObjectID] = []
        var sensors: [ObjectID: Entry] = [:]
        var lastChange = SensorChange(added: [], removed: [], changed: [], total: [])
        var changeWatchers: [UInt64: EventStream<SensorChange>.Continuation] = [:]
        var readingWatchers: [UInt64: EventStream<Reading>.Continuation] = [:]

        var total: [RegisteredSensor] { self.order.compactMap { self.sensors[$0]?.registered } }

        mutating func publish(_ change: SensorChange) {
            self.lastChange = change
            for watcher in self.changeWatchers.values { watcher.yield(change) }
        }
    }

    private let thingFilter: @Sendable (Thing) -> Bool
    private let sensorFilter: @Sendable (Sensor, Thing) -> Bool
    private let state = Mutex(State())
    private let nextWatcherID = Atomic<UInt64>(0)

    /// Creates the controller; add it to a ``Container``.
    ///
    /// - Parameters:
    ///   - thingFilter: Whether a received thing is followed (coaty-js `thingFilter`); by default all.
    ///   - sensorFilter: Whether a received sensor of a followed thing is registered (coaty-js
    ///     `sensorFilter`); by default all.
    public init(
        thingFilter: @escaping @Sendable (Thing) -> Bool = { _ in true },
        sensorFilter: @escaping @Sendable (Sensor, Thing) -> Bool = { _, _ in true }
    ) {
        self.thingFilter = thingFilter
        self.sensorFilter = sensorFilter
    }

    public func onInit(context: ControllerContext) async throws {
        let manager = context.communication
        // Subscribed on connect, so nothing advertised after this agent joined is missed.
        let things = try await manager.observeAdvertised(Thing.self)
        let sensors = try await manager.observeAdvertised(Sensor.self)
        let deadvertises = await manager.observeDeadvertise()
        self.state.withLock { $0.context = context }
        context.spawn { [weak self] in
            for await thing in things { self?.received(thing) }
        }
        context.spawn { [weak self] in
            for await sensor in sensors {
                guard let self else { return }
                // Sensors of things this controller follows only, as coaty-js's per-thing filter.
                guard let parentID = sensor.parentObjectID,
                    let thing = self.state.withLock({ $0.things[parentID]?.thing })
                else { continue }
                await self.received(sensor, of: thing)
            }
        }
        context.spawn { [weak self] in
            for await deadvertise in deadvertises { self?.deadvertised(deadvertise.objectIDs) }
        }
    }

    public func onCommunicationManagerStarting() async throws {
        guard let context = self.state.withLock({ $0.context }) else { return }
        let things = try await context.communication.discoverObjects(Thing.self)
        context.spawn { [weak self] in
            for await thing in things { self?.received(thing) }
        }
    }

    public func onCommunicationManagerStopping() async {
        let (work, changeWatchers, readingWatchers) = self.state.withLock { state in
            state.isStopped = true
            let removed = state.total
            let work = state.things.values.compactMap(\.query) + state.sensors.values.map(\.observations)
            state.things = [:]
            state.sensors = [:]
            state.order = []
            state.publish(SensorChange(added: [], removed: removed, changed: [], total: []))
            defer {
                state.changeWatchers = [:]
                state.readingWatchers = [:]
            }
            return (work, Array(state.changeWatchers.values), Array(state.readingWatchers.values))
        }
        for handle in work { handle.cancel() }
        // Finished outside the lock: their termination handlers take it.
        for watcher in changeWatchers { watcher.finish() }
        for watcher in readingWatchers { watcher.finish() }
    }

    // MARK: Reading

    /// The registered sensors, in registration order.
    public var registeredSensors: [RegisteredSensor] {
        self.state.withLock(\.total)
    }

    /// The changes of the registered sensors, starting with the latest one (coaty-js
    /// `registeredSensorsChangeInfo$`, a `BehaviorSubject`): before anything happened, an empty change.
    ///
    /// Each call returns a new stream; it finishes when the container stops, after the change that
    /// removes every sensor. It buffers `CommunicationManager.Configuration.observerBufferSize` changes
    /// (256 before the container initialised the controller), newest kept; each change's `total` is
    /// complete, so a consumer that lost some still knows the current sensors.
    public func sensorChanges() -> EventStream<SensorChange> {
        self.watch(
            current: { $0.lastChange },
            add: { $0.changeWatchers[$1] = $2 },
            remove: { $0.changeWatchers[$1] = nil }
        )
    }

    /// The observations channelled for the registered sensors from now on (coaty-js
    /// `sensorObservation$`).
    ///
    /// Each call returns a new stream; it finishes when the container stops, and buffers like
    /// ``sensorChanges()``.
    public func observations() -> EventStream<Reading> {
        self.watch(
            current: { _ in nil },
            add: { $0.readingWatchers[$1] = $2 },
            remove: { $0.readingWatchers[$1] = nil }
        )
    }

    /// A new stream fed by the watchers that `add` registers, starting with what `current` returns.
    private func watch<Event: Sendable>(
        current: (State) -> Event?,
        add: (inout State, UInt64, EventStream<Event>.Continuation) -> Void,
        remove: @escaping @Sendable (inout State, UInt64) -> Void
    ) -> EventStream<Event> {
        let id = self.nextWatcherID.wrappingAdd(1, ordering: .relaxed).oldValue
        let (stream, continuation, isStopped) = self.state.withLock { state in
            let capacity = state.context?.communication.configuration.observerBufferSize ?? 256
            let (stream, continuation) = EventStream<Event>.makeStream(bufferingNewest: capacity)
            if let event = current(state) { continuation.yield(event) }
            if !state.isStopped { add(&state, id, continuation) }
            return (stream, continuation, state.isStopped)
        }
        if isStopped {
            continuation.finish()
        } else {
            continuation.onTermination { [weak self] in self?.state.withLock { remove(&$0, id) } }
        }
        return stream
    }

    // MARK: Things and sensors

    /// Follows a thing: queries its sensors, replacing an earlier query for it.
    private func received(_ thing: Thing) {
        guard self.thingFilter(thing) else { return }
        let thingID = thing.objectID
        let replaced = self.state.withLock { state -> WorkHandle?? in
            guard let context = state.context, !state.isStopped else { return nil }
            let query = context.spawn { [weak self] in
                let batches = try await context.communication.queryObjects(
                    Sensor.self,
                    where: "parentObjectId",
                    equals: thingID
                )
                for await sensors in batches {
                    for sensor in sensors { await self?.received(sensor, of: thing) }
                }
            }
            defer { state.things[thingID] = KnownThing(thing: thing, query: query) }
            return .some(state.things[thingID]?.query)
        }
        if case .some(let old?) = replaced { old.cancel() }
    }

    /// Registers a sensor of a followed thing, or updates it: subscribes its observations first, then
    /// reports the change.
    private func received(_ sensor: Sensor, of thing: Thing) async {
        guard sensor.parentObjectID == thing.objectID, self.sensorFilter(sensor, thing),
            let context = self.state.withLock({ $0.isStopped ? nil : $0.context })
        else { return }
        let registered = RegisteredSensor(sensor: sensor, thing: thing)
        let observations: EventStream<SensorObservation>
        do {
            observations = try await context.communication.observeChanneledObservations(
                of: sensor.objectID,
                channelID: sensor.objectID.rawValue
            )
        } catch {
            context.logger.warning("\(context.controllerName): cannot observe sensor \(sensor.objectID): \(error)")
            return
        }
        let replaced = self.state.withLock { state -> WorkHandle?? in
            // The thing may have gone, or the agent stopped, while the subscription was made.
            guard !state.isStopped, state.things[thing.objectID] != nil else { return nil }
            let handle = context.spawn { [weak self] in
                for await observation in observations {
                    self?.deliver(Reading(observation: observation, sensor: registered))
                }
            }
            let old = state.sensors.updateValue(
                Entry(registered: registered, observations: handle),
                forKey: sensor.objectID
            )
            if old == nil { state.order.append(sensor.objectID) }
            let total = state.total
            state.publish(
                SensorChange(
                    added: old == nil ? [registered] : [],
                    removed: [],
                    changed: old == nil ? [] : [registered],
                    total: total
                )
            )
            return .some(old?.observations)
        }
        if case .some(let old?) = replaced { old.cancel() }
    }

    /// Removes the sensors a Deadvertise ends: those of things whose parent, or which themselves, are
    /// named, and sensors named directly; and stops following named things and things of named parents.
    private func deadvertised(_ objectIDs: [ObjectID]) {
        let named = Set(objectIDs)
        let work = self.state.withLock { state -> [WorkHandle] in
            var work: [WorkHandle] = []
            for (thingID, known) in state.things
            where named.contains(thingID) || known.thing.parentObjectID.map(named.contains) == true {
                state.things[thingID] = nil
                if let query = known.query { work.append(query) }
            }
            var removed: [RegisteredSensor] = []
            for sensorID in state.order {
                guard let entry = state.sensors[sensorID] else { continue }
                let thing = entry.registered.thing
                guard
                    named.contains(sensorID) || named.contains(thing.objectID)
                        || thing.parentObjectID.map(named.contains) == true
                else { continue }
                state.sensors[sensorID] = nil
                removed.append(entry.registered)
                work.append(entry.observations)
            }
            guard !removed.isEmpty else { return work }
            state.order.removeAll { state.sensors[$0] == nil }
            state.publish(SensorChange(added: [], removed: removed, changed: [], total: state.total))
            return work
        }
        for handle in work { handle.cancel() }
    }

    private func deliver(_ reading: Reading) {
        self.state.withLock { state in
            guard state.sensors[reading.sensor.sensor.objectID] != nil else { return }
            for watcher in state.readingWatchers.values { watcher.yield(reading) }
        }
    }
}
