import CoatyCommunication
import CoatyControllers
import CoatyModel

/// A client agent's logic: finds the service (Discover → Resolve), claims advertised tasks (Update →
/// Complete), does the ones it is given by calling the service's greeting (Call → Return), and
/// reports them done on a Channel.
final class ClientController: Controller {
    let name: String
    private let narrator: Narrator
    private let contextBox = ContextBox()

    init(name: String, narrator: Narrator) {
        self.name = name
        self.narrator = narrator
    }

    /// Sets up every observation before the agent connects: they are subscribed on connect, before
    /// the agent's identity is advertised, so no event sent after others see this agent is missed.
    func onInit(context: ControllerContext) async throws {
        self.contextBox.set(context)
        let communication = context.communication
        let me = context.identity.objectID
        let tasks = try await communication.observeAdvertise(objectType: HelloTask.objectType)

        // Find the service: it answers the Discover if it is already there, or advertises its
        // descriptor when it starts later. Whichever comes first.
        // Subscribe to the Advertise first, so a service starting in between is not missed.
        let advertised = try await communication.observeAdvertise(objectType: HelloWorld.serviceType)
        let resolves = try await communication.discover(try DiscoverEvent.byObjectTypes([HelloWorld.serviceType]))
        context.spawn { [self] in
            let service = await withTaskGroup(of: CoatyObject?.self) { group in
                group.addTask { await resolves.first { _ in true }?.object }
                group.addTask { await advertised.first { _ in true }?.object }
                defer { group.cancelAll() }
                return await group.next() ?? nil
            }
            guard let service else { return }
            self.narrator.event(self.name, "Discover→Resolve", "found \"\(service.name)\"")
            self.narrator.reach(.serviceFound(client: self.name))
        }

        context.spawn { [self] in
            for await advertise in tasks {
                guard let task = advertise.object as? HelloTask, task.state == .open else { continue }
                let completes = try await communication.update(UpdateEvent(task.with(state: .assigned, assignee: me)))
                let complete = try await completes.first(timeout: .seconds(10))
                guard let assigned = complete.object as? HelloTask, assigned.assignee == me else {
                    self.narrator.line(self.name, "Update→Complete", "task #\(task.number) went to another client")
                    continue
                }
                self.narrator.event(self.name, "Update→Complete", "claimed task #\(task.number)")
                let returned = try await communication.call(
                    CallEvent(operation: HelloWorld.greetOperation, parameters: ["name": .string(task.recipient)])
                ).first(timeout: .seconds(10))
                let greeting = returned.result?.stringValue ?? "?"
                self.narrator.event(self.name, "Call→Return", "\"\(greeting)\"")
                try await communication.publish(
                    ChannelEvent(
                        channelID: HelloWorld.progressChannel,
                        object: assigned.with(state: .done, greeting: greeting)
                    )
                )
                self.narrator.event(self.name, "Channel", "\(HelloWorld.progressChannel): task #\(task.number) done")
            }
        }
    }

    /// Asks the service for the finished tasks (Query → Retrieve with an ObjectFilter).
    func finishedTasks() async throws -> [HelloTask] {
        guard let context = self.contextBox.context else { return [] }
        let filter = ObjectFilter(
            conditions: .single(FilterCondition("state", .equals("done"))),
            orderByProperties: [FilterOrdering("number")]
        )
        let retrieve = try await context.communication.query(
            try QueryEvent.byObjectTypes([HelloTask.objectType], filter: filter)
        )
        .first(timeout: .seconds(10))
        let tasks = retrieve.objects.compactMap { $0 as? HelloTask }
        self.narrator.event(
            self.name,
            "Query→Retrieve",
            "\(tasks.count) finished: " + tasks.map { "#\($0.number)" }.joined(separator: " ")
        )
        return tasks
    }
}
