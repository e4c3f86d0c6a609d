import CoatyCommunication
import CoatyControllers
import CoatyModel
import CoatyTransport
import Testing

/// A room with a thermometer and a hygrometer, and helpers for running SensorThings agents on one
/// in-process bus.
struct SensorThingsFixture: Sendable {
    let owner: Identity
    let room: Thing
    let thermometer: Sensor
    let hygrometer: Sensor

    init(ownerName: String = "Source") {
        self.owner = Identity(name: ownerName)
        self.room = Thing(
            name: "Room 1",
            thingDescription: "A meeting room",
            parentObjectID: self.owner.objectID,
            locationID: "floor-1"
        )
        self.thermometer = Self.sensor("Thermometer", of: self.room, unit: "degC")
        self.hygrometer = Self.sensor("Hygrometer", of: self.room, unit: "%")
    }

    static func sensor(_ name: String, of thing: Thing, unit: String) -> Sensor {
        Sensor(
            name: name,
            sensorDescription: "\(name) of \(thing.name)",
            encodingType: Sensor.EncodingTypes.pdf,
            metadata: .string("http://example.com/\(name).pdf"),
            unitOfMeasurement: .init(symbol: unit),
            observationType: Sensor.ObservationTypes.measurement,
            observedProperty: .init(name: name, definition: "http://example.com/\(name)", description: name),
            parentObjectID: thing.objectID
        )
    }

    func configuration(_ identity: Identity, bus: InProcessBus) -> Container.Configuration {
        Container.Configuration(transport: InProcessTransport(bus: bus), communication: .init(identity: identity))
    }

    /// Runs the source agent (identity ``owner``) with `controllers` and a ``ThingOwner`` of ``room``.
    func withSource<Result: Sendable>(
        bus: InProcessBus,
        _ controllers: [any Controller],
        _ body: (Container) async throws -> Result
    ) async throws -> Result {
        try await Container.withRunning(
            configuration: self.configuration(self.owner, bus: bus),
            controllers: [ThingOwner(self.room)] + controllers,
            body
        )
    }

    /// Runs an observer agent named `name` with `controllers`.
    func withObserver<Result: Sendable>(
        _ name: String = "Observer",
        bus: InProcessBus,
        _ controllers: [any Controller],
        _ body: (Container) async throws -> Result
    ) async throws -> Result {
        try await Container.withRunning(
            configuration: self.configuration(Identity(name: name), bus: bus),
            controllers: controllers,
            body
        )
    }
}

/// Owns a thing as a coaty-js application would (coaty-js has no thing source controller): advertises
/// it when the agent connects and resolves Discovers for its id or for object type
/// `coaty.sensorThings.Thing` until the agent stops.
struct ThingOwner: Controller {
    let thing: Thing

    init(_ thing: Thing) { self.thing = thing }

    func onInit(context: ControllerContext) async throws {
        let thing = self.thing
        _ = await context.communication.handleDiscover { discover in
            let asked =
                (discover.isDiscoveringObjectID && discover.objectID == thing.objectID)
                || (discover.isDiscoveringTypes && discover.isObjectTypeCompatible(Thing.objectType))
            if asked { try discover.resolve(ResolveEvent(object: thing)) }
        }
        try await context.communication.publish(AdvertiseEvent(thing))
    }
}

/// The JSON of a tapped message's payload.
func json(_ message: TransportMessage) throws -> AnyCodable {
    try AnyCodable(json: message.payload)
}

/// The next message on the tap whose topic satisfies `predicate`.
func next(
    _ messages: inout AsyncStream<TransportMessage>.Iterator,
    where predicate: (String) -> Bool
) async throws -> TransportMessage {
    while let message = await messages.next() {
        if predicate(message.topic) { return message }
    }
    throw CancellationError()
}
