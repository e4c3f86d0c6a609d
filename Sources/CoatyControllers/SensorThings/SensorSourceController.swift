public import CoatyCommunication
import CoatyCore
public import CoatyModel
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Publishes this agent's sensors and their observations (coaty-js `SensorSourceController`), the
/// counterpart of a ``SensorObserverController`` or ``ThingSensorObservationObserverController``.
///
/// Register a `Sensor` with the ``SensorIO`` that reads it, up front in ``init(sensors:options:)``
/// or later with ``register(_:io:sampling:)``. On the wire, as in coaty-js (each can be turned off
/// in ``Options``):
/// - a registered sensor is advertised (`ADV:CoatyObject` and `ADV::coaty.sensorThings.Sensor`),
///   and deadvertised (`DAD`) when it is unregistered;
/// - a Discover for a registered sensor's object id is resolved with it, and a Discover by object
///   types that include `coaty.sensorThings.Sensor` with one Resolve per registered sensor;
/// - a Query whose object types include `coaty.sensorThings.Sensor` is answered with the registered
///   sensors that match its filter's conditions, in registration order, and not at all when none do;
/// - an observation reads the sensor's IO and goes out either channelled, as a Channel event on
///   `CHN:<sensor object id>`, or advertised (`ADV:CoatyObject` and
///   `ADV::coaty.sensorThings.Observation`): on demand with
///   ``publishObservation(of:as:resultQuality:validTime:parameters:featureOfInterestID:)``, or every
///   sampling interval (``Sampling``). The observation is named `"Observation of <sensor name>"`, its
///   parent is the sensor, and both its phenomenon and result time are the reading's time in
///   milliseconds since the Unix epoch.
///
/// Coaty-js does not advertise a sensor's `Thing`; neither does this controller: advertise it, and
/// resolve Discovers for it, as for any object (see Docs/SensorThings.md).
///
/// Where this differs from coaty-js, which is a class to subclass:
/// - on shutdown the registered sensors are deadvertised (one Deadvertise naming them all, unless
///   ``Options/deadvertisesSensors`` is off), where coaty-js leaves them: the identity's Deadvertise
///   does not name them, so observers would otherwise keep sensors that are gone;
/// - the channel id is always the sensor's object id and the observation is built as above: coaty-js's
///   overridable `getChannelId`, `createObservation` and publication hooks are not offered;
/// - publishing an observation of a sensor that is not registered throws, where coaty-js does nothing;
/// - the Discover and Query subscriptions are made when the agent connects and kept until it stops,
///   where coaty-js makes them when the first sensor is registered and drops them when the last one
///   goes; what is answered is the same.
///
/// ```swift
/// let thermometer = Sensor(name: "Thermometer", …, parentObjectID: room.objectID)
/// let io = InMemorySensorIO(value: 21.5)
/// let sources = SensorSourceController(sensors: [.init(thermometer, io: io, sampling: .channel(every: .seconds(1)))])
/// // … in a container with [sources]: an observation goes out on CHN:<thermometer id> every second.
/// ```
public final class SensorSourceController: Controller {
    /// What the controller does besides publishing observations (coaty-js controller options; all on by
    /// default, as in coaty-js).
    public struct Options: Sendable, Hashable {
        /// Advertise a sensor when it is registered (coaty-js `!skipSensorAdvertise`).
        public var advertisesSensors: Bool
        /// Deadvertise a sensor when it is unregistered, and all of them on shutdown (coaty-js
        /// `!skipSensorDeadvertise`, on unregistering only).
        public var deadvertisesSensors: Bool
        /// Resolve Discovers for registered sensors (coaty-js `!ignoreSensorDiscoverEvents`).
        public var answersDiscovers: Bool
        /// Answer Queries for registered sensors (coaty-js `!ignoreSensorQueryEvents`).
        public var answersQueries: Bool

        /// Creates options; everything is on unless given.
        public init(
            advertisesSensors: Bool = true,
            deadvertisesSensors: Bool = true,
            answersDiscovers: Bool = true,
            answersQueries: Bool = true
        ) {
            self.advertisesSensors = advertisesSensors
            self.deadvertisesSensors = deadvertisesSensors
            self.answersDiscovers = answersDiscovers
            self.answersQueries = answersQueries
        }
    }

    /// One registered sensor.
    private struct Registration {
        let sensor: Sensor
        let io: any SensorIO
        var sampler: WorkHandle?
        var valueWatchers: [UInt64: EventStream<AnyCodable>.Continuation] = [:]
    }

    private struct State {
        var context: ControllerContext?
        var isStopped = false
        /// Object ids in registration order, which is the order of Resolves and Retrieves.
        var order: [ObjectID] = []
        var registrations: [ObjectID: Registration] = [:]
        var handlers: [EventHandlerRegistration] = []

        var sensors: [Sensor] { self.order.compactMap { self.registrations[$0]?.sensor } }

        mutating func remove(_ sensorID: ObjectID) -> Registration? {
            guard let registration = self.registrations.removeValue(forKey: sensorID) else { return nil }
            self.order.removeAll { $0 == sensorID }
            return registration
        }
    }

    /// What the controller does besides publishing observations.
    public let options: Options
    private let initialSensors: [SensorDefinition]
    private let state = Mutex(State())
    private let nextWatcherID = Atomic<UInt64>(0)

    /// Creates the controller; add it to a ``Container``.
    ///
    /// - Parameters:
    ///   - sensors: Sensors to register when the container initialises the controller (coaty-js
    ///     `sensors` option); an invalid definition makes the container's `run()` throw.
    ///   - options: What to do besides publishing observations.
    public init(sensors: [SensorDefinition] = [], options: Options = Options()) {
        self.initialSensors = sensors
        self.options = options
    }

    public func onInit(context: ControllerContext) async throws {
        let manager = context.communication
        var handlers: [EventHandlerRegistration] = []
        // Answered where they are decoded: the answers come from the registrations alone.
        if self.options.answersDiscovers {
            handlers.append(await manager.handleDiscover { [weak self] in try self?.answer($0) })
        }
        if self.options.answersQueries {
            handlers.append(await manager.handleQuery { [weak self] in try self?.answer($0) })
        }
        self.state.withLock { state in
            state.context = context
            state.handlers = handlers
        }
        for definition in self.initialSensors {
            try self.register(definition.sensor, io: definition.io, sampling: definition.sampling)
        }
    }

    public func onCommunicationManagerStopping() async {
        let (context, removed, handlers) = self.state.withLock { state in
            state.isStopped = true
            defer {
                state.order = []
                state.registrations = [:]
                state.handlers = []
            }
            return (state.context, state.order.compactMap { state.registrations[$0] }, state.handlers)
        }
        for handler in handlers { handler.cancel() }
        for registration in removed { Self.end(registration) }
        guard self.options.deadvertisesSensors, !removed.isEmpty, let context else { return }
        do {
            try await context.communication.publish(DeadvertiseEvent(objectIDs: removed.map(\.sensor.objectID)))
        } catch {
            context.logger.warning("\(context.controllerName): cannot deadvertise the sensors: \(error)")
        }
    }

    // MARK: Registering

    /// The registered sensors, in registration order.
    public var registeredSensors: [Sensor] {
        self.state.withLock(\.sensors)
    }

    /// Whether a sensor with `sensorID` is registered.
    public func isRegistered(_ sensorID: ObjectID) -> Bool {
        self.state.withLock { $0.registrations[sensorID] != nil }
    }

    /// The registered sensor with `sensorID`, if any.
    public func sensor(_ sensorID: ObjectID) -> Sensor? {
        self.state.withLock { $0.registrations[sensorID]?.sensor }
    }

    /// The IO of the registered sensor with `sensorID`, if any.
    public func sensorIO(_ sensorID: ObjectID) -> (any SensorIO)? {
        self.state.withLock { $0.registrations[sensorID]?.io }
    }

    /// Registers a sensor: advertises it (unless ``Options/advertisesSensors`` is off) and, with a
    /// `sampling`, starts publishing an observation of it every sampling interval, the first one
    /// interval after registering.
    ///
    /// A sensor whose object id is already registered is ignored, as in coaty-js. Returns without
    /// suspending; the Advertise is enqueued (see `CommunicationManager.publish(_:)`).
    ///
    /// - Parameters:
    ///   - sensor: The sensor. Its `parentObjectID` should be its `Thing`'s object id, which is
    ///     what observers query sensors by.
    ///   - io: Reads the sensor's values.
    ///   - sampling: How and how often to publish observations on their own; `nil` for on demand only.
    /// - Returns: `false` if a sensor with that object id was already registered.
    /// - Throws: `CommunicationError` with code `CommunicationError.Code.invalidArgument` for a
    ///   sampling interval that is not positive; `CommunicationError.Code.notRunning` before the
    ///   container initialised the controller or once it is stopping; an error from publishing the
    ///   Advertise (the sensor is then not registered).
    @discardableResult
    public func register(_ sensor: Sensor, io: any SensorIO, sampling: Sampling? = nil) throws -> Bool {
        if let sampling, sampling.interval <= .zero {
            throw CommunicationError(.invalidArgument, "a sampling interval must be positive, not \(sampling.interval)")
        }
        let sensorID = sensor.objectID
        let context = try self.state.withLock { state throws(CommunicationError) -> ControllerContext? in
            guard let context = state.context, !state.isStopped else {
                throw CommunicationError(.notRunning, "the controller is not running in a container")
            }
            guard state.registrations[sensorID] == nil else { return nil }
            var registration = Registration(sensor: sensor, io: io)
            if let sampling {
                // Spawning only hands the work over; it runs once this lock is released.
                registration.sampler = context.spawn { [weak self] in await self?.sample(sensorID, sampling) }
            }
            state.registrations[sensorID] = registration
            state.order.append(sensorID)
            return context
        }
        guard let context else { return false }
        if self.options.advertisesSensors {
            do {
                try context.communication.publishWithoutWaiting(AdvertiseEvent(sensor))
            } catch {
                if let registration = self.state.withLock({ $0.remove(sensorID) }) { Self.end(registration) }
                throw error
            }
        }
        return true
    }

    /// Unregisters a sensor: stops its periodic publication, finishes its ``values(of:)`` streams and
    /// deadvertises it (unless ``Options/deadvertisesSensors`` is off).
    ///
    /// Returns without suspending; the Deadvertise is enqueued.
    ///
    /// - Returns: `false` if no sensor with `sensorID` was registered.
    /// - Throws: An error from publishing the Deadvertise; the sensor is unregistered all the same.
    @discardableResult
    public func unregister(_ sensorID: ObjectID) throws -> Bool {
        let (registration, context) = self.state.withLock { ($0.remove(sensorID), $0.context) }
        guard let registration else { return false }
        Self.end(registration)
        if self.options.deadvertisesSensors, let context {
            try context.communication.publishWithoutWaiting(DeadvertiseEvent(objectIDs: [sensorID]))
        }
        return true
    }

    /// The values read for the observations of a sensor from now on (coaty-js
    /// `getSensorValueObservable`): each value this controller reads to publish an observation, before
    /// it is published. Reading the ``SensorIO`` directly yields nothing here.
    ///
    /// Each call returns a new stream. It finishes when the sensor is unregistered or the container
    /// stops; it buffers `CommunicationManager.Configuration.observerBufferSize` values, newest kept.
    ///
    /// - Throws: `CommunicationError` with code `CommunicationError.Code.invalidArgument` if no
    ///   sensor with `sensorID` is registered.
    public func values(of sensorID: ObjectID) throws -> EventStream<AnyCodable> {
        let watcherID = self.nextWatcherID.wrappingAdd(1, ordering: .relaxed).oldValue
        let (stream, continuation) = try self.state.withLock { state throws(CommunicationError) in
            guard let context = state.context, state.registrations[sensorID] != nil else {
                throw CommunicationError(.invalidArgument, "sensor \(sensorID) is not registered")
            }
            let (stream, continuation) = EventStream<AnyCodable>.makeStream(
                bufferingNewest: context.communication.configuration.observerBufferSize
            )
            state.registrations[sensorID]?.valueWatchers[watcherID] = continuation
            return (stream, continuation)
        }
        continuation.onTermination { [weak self] in
            self?.state.withLock { _ = $0.registrations[sensorID]?.valueWatchers.removeValue(forKey: watcherID) }
        }
        return stream
    }

    // MARK: Observations

    /// Reads a registered sensor and publishes the observation (coaty-js
    /// `publishChanneledObservation` and `publishAdvertisedObservation`).
    ///
    /// Suspends while the sensor's ``SensorIO`` reads; the observation is then enqueued and returned.
    /// Cancelling the task cancels the reading.
    ///
    /// - Parameters:
    ///   - sensorID: The registered sensor.
    ///   - publication: Channelled on `CHN:<sensorID>` (the default) or advertised.
    ///   - resultQuality: The quality of the result.
    ///   - validTime: When the result may be used.
    ///   - parameters: Environmental conditions during the measurement.
    ///   - featureOfInterestID: The observed feature of interest or location.
    /// - Returns: The published observation.
    /// - Throws: `CommunicationError` with code `CommunicationError.Code.invalidArgument` if no
    ///   sensor with `sensorID` is registered, or for a channel id (the sensor's object id) that is not
    ///   a valid event filter; what the ``SensorIO`` throws; an error from publishing.
    @discardableResult
    public func publishObservation(
        of sensorID: ObjectID,
        as publication: ObservationPublication = .channel,
        resultQuality: [String]? = nil,
        validTime: TimestampInterval? = nil,
        parameters: [String: AnyCodable]? = nil,
        featureOfInterestID: ObjectID? = nil
    ) async throws -> SensorObservation {
        let found = self.state.withLock { state in
            state.registrations[sensorID].map { ($0.sensor, $0.io, state.context) }
        }
        guard let (sensor, io, context) = found, let context else {
            throw CommunicationError(.invalidArgument, "sensor \(sensorID) is not registered")
        }
        let value = try await io.read()
        self.state.withLock { state in
            state.registrations[sensorID]?.valueWatchers.values.forEach { $0.yield(value) }
        }
        let now = (Date().timeIntervalSince1970 * 1000).rounded(.down)
        let observation = SensorObservation(
            name: "Observation of \(sensor.name)",
            phenomenonTime: now,
            result: value,
            resultTime: now,
            resultQuality: resultQuality,
            validTime: validTime,
            parameters: parameters,
            featureOfInterestID: featureOfInterestID,
            parentObjectID: sensor.objectID
        )
        switch publication {
        case .channel:
            try await context.communication.publish(
                ChannelEvent(channelID: sensor.objectID.rawValue, object: observation)
            )
        case .advertise:
            try await context.communication.publish(AdvertiseEvent(observation))
        }
        return observation
    }

    /// Publishes an observation of `sensorID` every interval until the work is cancelled (the sensor is
    /// unregistered or the container stops). Intervals are counted from registration, as coaty-js's
    /// `setInterval` does; a reading slower than the interval delays the next one instead of bunching.
    private func sample(_ sensorID: ObjectID, _ sampling: Sampling) async {
        let clock = ContinuousClock()
        var deadline = clock.now.advanced(by: sampling.interval)
        while true {
            do {
                try await clock.sleep(until: deadline)
            } catch {
                return
            }
            do {
                try await self.publishObservation(of: sensorID, as: sampling.publication)
            } catch is CancellationError {
                return
            } catch {
                guard let context = self.state.withLock({ $0.context }) else { return }
                context.logger.warning(
                    "\(context.controllerName): no observation of sensor \(sensorID): \(error)"
                )
            }
            deadline = Swift.max(deadline.advanced(by: sampling.interval), clock.now)
        }
    }

    // MARK: Answering

    /// Resolves a Discover for a registered sensor's object id, or for object type
    /// `coaty.sensorThings.Sensor` (one Resolve per sensor).
    private func answer(_ discover: DiscoverEvent) throws {
        let sensors: [Sensor] = self.state.withLock { state in
            if discover.isDiscoveringObjectID, let objectID = discover.objectID {
                return state.registrations[objectID].map { [$0.sensor] } ?? []
            }
            if discover.isDiscoveringTypes, discover.isObjectTypeCompatible(Sensor.objectType) {
                return state.sensors
            }
            return []
        }
        // A sensor built with another object type would fail the requester's check: not sent.
        for sensor in sensors where discover.matches(sensor) { try discover.resolve(ResolveEvent(object: sensor)) }
    }

    /// Answers a Query for object type `coaty.sensorThings.Sensor` with the sensors matching its
    /// filter's conditions. As coaty-js (`ObjectMatcher.matchesFilter`), ordering and paging are not
    /// applied, and nothing is sent when no sensor matches.
    private func answer(_ query: QueryEvent) throws {
        guard query.objectTypes?.contains(Sensor.objectType) == true else { return }
        let sensors = self.state.withLock(\.sensors).filter {
            query.isTypeCompatible($0) && query.objectFilter.matches($0)
        }
        if !sensors.isEmpty { try query.retrieve(RetrieveEvent(objects: sensors)) }
    }

    /// Stops what a registration started; outside the lock, since finishing a stream runs its
    /// termination handler, which takes it.
    private static func end(_ registration: Registration) {
        registration.sampler?.cancel()
        for watcher in registration.valueWatchers.values { watcher.finish() }
    }
}
