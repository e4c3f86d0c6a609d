public import CoatyCommunication
public import CoatyModel
import Synchronization

/// Observes things (coaty-js `ThingObserverController`).
///
/// Every method sends or subscribes exactly what coaty-js does:
///
/// | Method | On the wire |
/// |---|---|
/// | ``discoverThings()`` | Discover with object types `["coaty.sensorThings.Thing"]` |
/// | ``observeAdvertisedThings()`` | subscribes `ADV::coaty.sensorThings.Thing` |
/// | ``queryThings(atLocation:)`` | Query with object types `["coaty.sensorThings.Thing"]`, filter `locationId` equals the location id |
///
/// Nothing is cached, as in coaty-js. Whoever owns a thing answers: coaty-js has no thing source
/// controller, so the agent advertises its things and resolves Discovers for them itself (see
/// Docs/SensorThings.md).
///
/// Each stream is subscribed when the call returns, ends when the container stops, and releases its
/// subscription when the consumer stops iterating (see `EventStream`).
public final class ThingObserverController: Controller {
    private let context = Mutex<ControllerContext?>(nil)

    /// Creates the controller; add it to a ``Container``.
    public init() {}

    public func onInit(context: ControllerContext) async throws {
        self.context.withLock { $0 = context }
    }

    /// Discovers the things of all agents: publishes a Discover for object type
    /// `coaty.sensorThings.Thing` and yields each resolved thing.
    ///
    /// The stream stays open for Resolves from any number of agents until the consumer stops.
    ///
    /// - Throws: `CommunicationError` with code `CommunicationError.Code.notRunning` before the
    ///   container initialised the controller.
    public func discoverThings() async throws -> EventStream<Thing> {
        try await self.manager().discoverObjects(Thing.self)
    }

    /// The things advertised from now on.
    ///
    /// - Throws: `CommunicationError` with code `CommunicationError.Code.notRunning` before the
    ///   container initialised the controller.
    public func observeAdvertisedThings() async throws -> EventStream<Thing> {
        try await self.manager().observeAdvertised(Thing.self)
    }

    /// Queries the things at a location: those whose `locationId` is `locationID`.
    ///
    /// The stream yields each Retrieve's things and stays open until the consumer stops; use
    /// `first(timeout:)` when one answer is enough.
    ///
    /// - Throws: `CommunicationError` with code `CommunicationError.Code.notRunning` before the
    ///   container initialised the controller.
    public func queryThings(atLocation locationID: ObjectID) async throws -> EventStream<[Thing]> {
        try await self.manager().queryObjects(Thing.self, where: "locationId", equals: locationID)
    }

    private func manager() throws(CommunicationError) -> CommunicationManager {
        guard let context = self.context.withLock({ $0 }) else {
            throw CommunicationError(.notRunning, "the controller has not been initialised by a container")
        }
        return context.communication
    }
}
