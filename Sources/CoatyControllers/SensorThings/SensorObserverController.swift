public import CoatyCommunication
public import CoatyModel
import Synchronization

/// Observes sensors and their observations (coaty-js `SensorObserverController`), the counterpart
/// of a ``SensorSourceController`` on another agent.
///
/// Every method sends or subscribes exactly what coaty-js does:
///
/// | Method | On the wire |
/// |---|---|
/// | ``observeChanneledObservations(of:channelID:)`` | subscribes `CHN:<channel id>`, by default the sensor's object id |
/// | ``observeAdvertisedObservations(of:)`` | subscribes `ADV::coaty.sensorThings.Observation` |
/// | ``observeAdvertisedSensors()`` | subscribes `ADV::coaty.sensorThings.Sensor` |
/// | ``discoverSensors()`` | Discover with object types `["coaty.sensorThings.Sensor"]` |
/// | ``querySensors(ofThing:)`` | Query with object types `["coaty.sensorThings.Sensor"]`, filter `parentObjectId` equals the thing id |
///
/// Observation streams keep the observations of type `coaty.sensorThings.Observation` whose parent is
/// the sensor, as coaty-js does; other objects on the channel are skipped. A malformed observation
/// fails to decode: the manager drops it and reports it (`CommunicationManager.observeDiagnostics()`).
/// Nothing is cached, as in coaty-js; ``ThingSensorObservationObserverController`` keeps track of
/// things and their sensors.
///
/// Each stream is subscribed when the call returns, ends when the container stops, and releases its
/// subscription when the consumer stops iterating (see `EventStream`).
///
/// ```swift
/// let sensors = SensorObserverController()
/// // … in a container with [sensors], once started:
/// for await sensor in try await sensors.discoverSensors() {
///     for await observation in try await sensors.observeChanneledObservations(of: sensor.objectID) { … }
/// }
/// ```
public final class SensorObserverController: Controller {
    private let context = Mutex<ControllerContext?>(nil)

    /// Creates the controller; add it to a ``Container``.
    public init() {}

    public func onInit(context: ControllerContext) async throws {
        self.context.withLock { $0 = context }
    }

    /// The observations of a sensor channelled by its source.
    ///
    /// - Parameters:
    ///   - sensorID: The sensor's object id.
    ///   - channelID: The channel; by default the sensor's object id, which is what a
    ///     ``SensorSourceController`` (and coaty-js's) publishes on.
    /// - Throws: `CommunicationError` with code `CommunicationError.Code.invalidArgument` if the
    ///   channel id is not a valid event filter; `CommunicationError.Code.notRunning` before the
    ///   container initialised the controller.
    public func observeChanneledObservations(
        of sensorID: ObjectID,
        channelID: String? = nil
    ) async throws -> EventStream<SensorObservation> {
        try await self.manager().observeChanneledObservations(of: sensorID, channelID: channelID ?? sensorID.rawValue)
    }

    /// The observations of a sensor advertised by its source.
    ///
    /// - Throws: `CommunicationError` with code `CommunicationError.Code.notRunning` before the
    ///   container initialised the controller.
    public func observeAdvertisedObservations(of sensorID: ObjectID) async throws -> EventStream<SensorObservation> {
        try await self.manager().observeAdvertisedObservations(of: sensorID)
    }

    /// The sensors advertised from now on.
    ///
    /// - Throws: `CommunicationError` with code `CommunicationError.Code.notRunning` before the
    ///   container initialised the controller.
    public func observeAdvertisedSensors() async throws -> EventStream<Sensor> {
        try await self.manager().observeAdvertised(Sensor.self)
    }

    /// Discovers the sensors of all agents: publishes a Discover for object type
    /// `coaty.sensorThings.Sensor` and yields each resolved sensor.
    ///
    /// The stream stays open for Resolves from any number of agents until the consumer stops.
    ///
    /// - Throws: `CommunicationError` with code `CommunicationError.Code.notRunning` before the
    ///   container initialised the controller.
    public func discoverSensors() async throws -> EventStream<Sensor> {
        try await self.manager().discoverObjects(Sensor.self)
    }

    /// Queries the sensors of a thing: those whose `parentObjectId` is `thingID`.
    ///
    /// The stream yields each Retrieve's sensors and stays open until the consumer stops; use
    /// `first(timeout:)` when one answer is enough.
    ///
    /// - Throws: `CommunicationError` with code `CommunicationError.Code.notRunning` before the
    ///   container initialised the controller.
    public func querySensors(ofThing thingID: ObjectID) async throws -> EventStream<[Sensor]> {
        try await self.manager().queryObjects(Sensor.self, where: "parentObjectId", equals: thingID)
    }

    private func manager() throws(CommunicationError) -> CommunicationManager {
        guard let context = self.context.withLock({ $0 }) else {
            throw CommunicationError(.notRunning, "the controller has not been initialised by a container")
        }
        return context.communication
    }
}
