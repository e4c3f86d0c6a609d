import CoatyCommunication
import CoatyControllers
import CoatyModel
import Synchronization

/// The sensor agent's logic: its IO node holds a thermometer, an IO source whose readings its
/// ``IOSourceController`` publishes on the routes the router associates it on; it also notices who is
/// in the living room and updates the home's IO context when that changes.
///
/// Run it in a container with ``controllers``, configured with ``node`` as the agent's IO node.
final class SensorController: Controller {
    /// Sends every reading at once: the router gives no update rate, and none is needed.
    let thermometer = IOSource(
        name: "Thermometer",
        valueType: Home.temperature,
        updateStrategy: IOSourceUpdateStrategy.none
    )
    let node: IONode
    /// Publishes the thermometer's values along its associations.
    let sources = IOSourceController()

    private let context = Mutex<ControllerContext?>(nil)
    /// The thermometer's association as last observed: nil until it was first associated.
    private let associated = Mutex<Bool?>(nil)
    private let narrator: Narrator

    init(narrator: Narrator) {
        self.node = IONode(name: Home.contextName, ioSources: [self.thermometer])
        self.narrator = narrator
    }

    /// The controllers of the sensor agent: the source controller first, as this one uses it.
    var controllers: [any Controller] { [self.sources, self] }

    /// Whether the thermometer is associated, so that its readings go out: the current state first,
    /// then each change.
    func association() throws -> EventStream<Bool> {
        try self.sources.observeAssociation(for: self.thermometer)
    }

    func onInit(context: ControllerContext) async throws {
        self.context.withLock { $0 = context }
        let associations = try self.association()
        context.spawn { [self] in
            var previous = false
            for await associated in associations where associated != previous {
                previous = associated
                self.associated.withLock { $0 = associated }
                self.narrator.event(
                    "sensor",
                    "associated",
                    associated ? "the thermometer's readings go out now" : "not associated: readings are dropped"
                )
            }
        }
    }

    /// Publishes readings `numbers`, `pacing` apart, and stops early once the thermometer's association
    /// has ended, as nobody would get the rest.
    ///
    /// - Returns: How many readings it published.
    @discardableResult
    func publish(readings numbers: ClosedRange<Int>, pacing: Duration) async throws -> Int {
        self.narrator.event("sensor", "IO values", "publishing readings #\(numbers.lowerBound)–#\(numbers.upperBound)")
        for number in numbers {
            if self.associated.withLock({ $0 == false }) { return number - numbers.lowerBound }
            try self.sources.publish(.double(Home.celsius(reading: number)), from: self.thermometer)
            if pacing > .zero, number < numbers.upperBound { try await Task.sleep(for: pacing) }
        }
        return numbers.count
    }

    /// Tells the router whether someone is in the living room: finds the home's IO context (Discover →
    /// Resolve) and updates it (Update → Complete); the router then evaluates its rules again.
    func reportLivingRoom(occupied: Bool) async throws {
        guard let communication = self.context.withLock({ $0?.communication }) else { return }
        let resolve = try await communication.discover(try DiscoverEvent.byCoreTypes([.ioContext]))
            .first(timeout: .seconds(10))
        guard let home = resolve.object, home.name == Home.contextName else {
            throw ExampleError(description: "no IO context \(Home.contextName) was discovered")
        }
        self.narrator.event("sensor", "Discover", "found the IO context \(home.name)")
        var properties = home.customProperties
        properties[Home.livingRoomOccupied] = .bool(occupied)
        let updated = IOContext(objectID: home.objectID, name: home.name, customProperties: properties)
        _ = try await communication.update(UpdateEvent(updated)).first(timeout: .seconds(10))
        self.narrator.event(
            "sensor",
            "Update",
            "\(Home.livingRoomOccupied) = \(occupied): the router completed the context update"
        )
    }
}
