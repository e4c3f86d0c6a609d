import CoatyCommunication
import CoatyControllers
import CoatyModel
import Synchronization

/// A display agent's logic: its IO node holds one IO actor, a display in a room, and it shows every
/// temperature its ``IOActorController`` hands it.
///
/// Run it in a container with ``controllers``, configured with ``node`` as the agent's IO node.
final class DisplayController: Controller {
    let room: String
    let actor: IOActor
    let node: IONode
    /// Hands the actor the values of the sources the router associates with it.
    let actors = IOActorController()
    /// The reading numbers shown, as they are shown, for whoever waits for one; finishes when the
    /// agent stops.
    let readings: AsyncStream<Int>

    private let readingsContinuation: AsyncStream<Int>.Continuation
    private let shownReadings = Mutex<[Int]>([])
    private let narrator: Narrator

    init(room: String, narrator: Narrator) {
        self.room = room
        self.actor = IOActor(name: "\(room) display", valueType: Home.temperature)
        self.node = IONode(name: Home.contextName, ioActors: [self.actor], characteristics: [Home.room: .string(room)])
        self.narrator = narrator
        (self.readings, self.readingsContinuation) = AsyncStream.makeStream()
    }

    /// The controllers of the display agent: the actor controller first, as this one uses it.
    var controllers: [any Controller] { [self.actors, self] }

    /// The reading numbers shown so far, in order.
    var shown: [Int] { self.shownReadings.withLock { $0 } }

    /// Whether the display is associated, its route observed: the current state first, then each
    /// change.
    func association() throws -> EventStream<Bool> {
        try self.actors.observeAssociation(for: self.actor)
    }

    /// Starts showing values before the agent connects, so that none that reach the actor is missed.
    func onInit(context: ControllerContext) async throws {
        let values = try self.actors.observeIOValues(for: self.actor)
        let associations = try self.association()
        context.spawn { [self] in
            var previous = false
            for await associated in associations where associated != previous {
                previous = associated
                self.narrator.event(
                    self.room,
                    "associated",
                    associated ? "the router associated a thermometer: showing its values" : "association ended"
                )
            }
        }
        context.spawn { [self] in
            defer { self.readingsContinuation.finish() }
            for await value in values {
                guard let celsius = value.value?.doubleValue else { continue }
                let reading = Home.reading(celsius: celsius)
                self.shownReadings.withLock { $0.append(reading) }
                self.narrator.event(self.room, "IO value", "shows \(Home.format(celsius)) (reading #\(reading))")
                self.readingsContinuation.yield(reading)
            }
        }
    }
}
