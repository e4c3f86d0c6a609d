import CoatyCommunication
import CoatyModel

/// The SensorThings requests and observations of coaty-js's `SensorObserverController` and
/// `ThingObserverController`, shared by the Swift observer controllers.
///
/// Each maps events to objects where the manager decodes them: events whose object is not of the
/// expected class (an object of another type, or none) are skipped as coaty-js skips them; events
/// whose object fails to decode never get here, the manager drops and reports them.
extension CommunicationManager {
    /// Observations of `sensorID` channelled on `channelID` (`CHN:<channelID>`): coaty-js
    /// `observeChanneledObservations`, which keeps objects of type `coaty.sensorThings.Observation`
    /// whose parent is the sensor.
    func observeChanneledObservations(
        of sensorID: ObjectID,
        channelID: String
    ) async throws(CommunicationError) -> EventStream<SensorObservation> {
        let route = try self.channelRoute(channelID)
        return await self.observe(filter: route.filter) { Self.observation(route.select($0)?.object, of: sensorID) }
    }

    /// Observations of `sensorID` advertised (`ADV::coaty.sensorThings.Observation`): coaty-js
    /// `observeAdvertisedObservations`.
    func observeAdvertisedObservations(of sensorID: ObjectID) async throws(CommunicationError)
        -> EventStream<SensorObservation>
    {
        let route = try self.advertiseRoute(objectType: SensorObservation.objectType)
        return await self.observe(filter: route.filter) { Self.observation(route.select($0)?.object, of: sensorID) }
    }

    /// Advertised objects of SensorThings class `T` (`ADV::<objectType>`): coaty-js
    /// `observeAdvertisedSensors` and `observeAdvertisedThings`.
    func observeAdvertised<T: CoatyObject>(_ type: T.Type) async throws(CommunicationError) -> EventStream<T> {
        let route = try self.advertiseRoute(objectType: T.objectType)
        return await self.observe(filter: route.filter) { route.select($0)?.object as? T }
    }

    /// Publishes a Discover for object type `T.objectType` and returns the resolved objects: coaty-js
    /// `discoverSensors` and `discoverThings`.
    func discoverObjects<T: CoatyObject>(_ type: T.Type) async throws -> EventStream<T> {
        try await self.discover(try DiscoverEvent.byObjectTypes([T.objectType])) { $0.object as? T }
    }

    /// Publishes a Query for object type `T.objectType` whose `property` equals `objectID` and
    /// returns each Retrieve's objects: coaty-js `querySensorsOfThing` (`parentObjectId`) and
    /// `queryThingsAtLocation` (`locationId`).
    func queryObjects<T: CoatyObject>(
        _ type: T.Type,
        where property: String,
        equals objectID: ObjectID
    ) async throws -> EventStream<[T]> {
        let filter = ObjectFilter(conditions: .single(.init(.dotted(property), .equals(.string(objectID.rawValue)))))
        return try await self.query(try QueryEvent.byObjectTypes([T.objectType], filter: filter)) { retrieve in
            retrieve.objects.compactMap { $0 as? T }
        }
    }

    private static func observation(_ object: CoatyObject?, of sensorID: ObjectID) -> SensorObservation? {
        guard let observation = object as? SensorObservation,
            observation.objectType == SensorObservation.objectType,
            observation.parentObjectID == sensorID
        else { return nil }
        return observation
    }
}
