import CoatyCommunication
import CoatyControllers
import CoatyMQTT
import CoatyModel
import Synchronization

/// One agent of the scene in its own process, against any broker: `hello-world service|client|monitor`.
///
/// The service waits for a client, offers `--tasks` tasks one after another and leaves when all are
/// done; clients and the monitor leave when they see the service go.
enum SingleAgent {
    static func run(_ options: Options) async throws {
        let narrator = Narrator()
        let lifecycle = ObjectLifecycleController()
        let name = options.role == "client" ? options.name : options.role
        let configuration = Container.Configuration(
            transport: MQTTTransport(
                configuration: .init(
                    brokerURL: options.broker,
                    username: options.username,
                    password: options.password,
                    tls: .init(trustedCertificates: options.caFile.map { .file($0) })
                )
            ),
            communication: .init(
                identity: Identity(name: name),
                namespace: options.namespace,
                objectFamily: HelloWorld.family
            )
        )
        switch options.role {
        case "service":
            let service = ServiceController(narrator: narrator, lifecycle: lifecycle)
            try await Container.withRunning(configuration: configuration, controllers: [lifecycle, service]) { _ in
                narrator.say("service: waiting for \(options.agents) other agent(s) on \(options.broker)")
                let me = service.identityID
                var present = Set<ObjectID>()
                for await change in try await lifecycle.observeObjectLifecycleInfo(
                    coreType: .identity,
                    where: { $0.objectID != me }
                ) {
                    present.formUnion(change.added.map(\.objectID))
                    present.subtract(change.removed.map(\.objectID))
                    if present.count >= options.agents { break }
                }
                for number in 1...options.tasks {
                    try service.offer(number)
                    let done = await narrator.wait(for: .seconds(60)) { milestone in
                        if case .taskDone(number, _) = milestone { return true }
                        return false
                    }
                    guard done else { throw SceneError(description: "task #\(number) was not done within 60 s") }
                }
                narrator.say("service: all \(options.tasks) tasks done; leaving")
            }
        case "client", "monitor":
            let agent: any Controller =
                options.role == "client"
                ? ClientController(name: options.name, narrator: narrator)
                : MonitorController(narrator: narrator, lifecycle: lifecycle)
            let watcher = ServiceWatcher(lifecycle: lifecycle)
            try await Container.withRunning(configuration: configuration, controllers: [lifecycle, watcher, agent]) {
                _ in
                narrator.say("\(name): joined \(options.broker); leaving when the service leaves")
                guard let service = watcher.changes else { return }
                var seen = false
                for await change in service {
                    if !change.added.isEmpty { seen = true }
                    if seen, !change.removed.isEmpty { break }
                }
                narrator.say("\(name): the service left; leaving")
            }
        default:
            throw SceneError(description: "unknown role \(options.role)")
        }
    }
}

/// Follows the service's identity from before the agent connects: registered in `onInit`, the
/// subscriptions are in place before the agent's join, so a service that finishes quickly is not missed.
final class ServiceWatcher: Controller {
    private let lifecycle: ObjectLifecycleController
    private let stream = Mutex<EventStream<ObjectLifecycleInfo>?>(nil)

    init(lifecycle: ObjectLifecycleController) {
        self.lifecycle = lifecycle
    }

    func onInit(context: ControllerContext) async throws {
        let changes = try await self.lifecycle.observeObjectLifecycleInfo(coreType: .identity) { $0.name == "service" }
        self.stream.withLock { $0 = changes }
    }

    var changes: EventStream<ObjectLifecycleInfo>? { self.stream.withLock { $0 } }
}
