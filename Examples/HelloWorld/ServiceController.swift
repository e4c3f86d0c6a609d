import CoatyCommunication
import CoatyControllers
import CoatyModel
import Synchronization

/// The service agent's logic: offers greeting tasks, assigns each to the first client that claims it
/// (Update → Complete), greets on request (Call → Return), answers queries for tasks (Query →
/// Retrieve), learns of finished tasks on a Channel, and logs through distributed logging.
final class ServiceController: Controller {
    let name = "service"
    private let narrator: Narrator
    private let lifecycle: ObjectLifecycleController
    private let state = Mutex<(context: ControllerContext?, tasks: [ObjectID: HelloTask])>((nil, [:]))

    init(narrator: Narrator, lifecycle: ObjectLifecycleController) {
        self.narrator = narrator
        self.lifecycle = lifecycle
    }

    func onInit(context: ControllerContext) async throws {
        self.state.withLock { $0.context = context }
    }

    func onCommunicationManagerStarting() async throws {
        guard let context = self.state.withLock({ $0.context }) else { return }
        let communication = context.communication

        // Claims: the first client to claim an open task gets it; later claims see who has it.
        let updates = try await communication.observeUpdate(objectType: HelloTask.objectType)
        context.spawn { [self] in
            for await update in updates {
                guard let claim = update.object as? HelloTask, let client = update.origin?.sourceID else { continue }
                let (task, isNew) = self.state.withLock { state -> (HelloTask?, Bool) in
                    guard let current = state.tasks[claim.objectID] else { return (nil, false) }
                    guard current.state == .open else { return (current, false) }
                    let assigned = current.with(state: .assigned, assignee: client)
                    state.tasks[claim.objectID] = assigned
                    return (assigned, true)
                }
                guard let task else { continue }
                try update.complete(CompleteEvent(task))
                if isNew {
                    self.narrator.event(
                        "service",
                        "Update→Complete",
                        "task #\(task.number) assigned to \(client.rawValue.prefix(8))"
                    )
                }
            }
        }

        // The greeting operation, with the standard -32602 error for bad parameters.
        let calls = try await communication.observeCall(HelloWorld.greetOperation)
        context.spawn { [self] in
            for await call in calls {
                if let recipient = call.parameter(named: "name")?.stringValue, !recipient.isEmpty {
                    try call.returnResult(.string("Hello, \(recipient)!"), executionInfo: ["service": "hello"])
                    self.narrator.event("service", "Call→Return", "greet(\(recipient))")
                } else {
                    try call.returnError(RemoteCallError(code: -32602, message: "Invalid params"))
                }
            }
        }

        // Queries for tasks, answered with the filter the requester sent.
        let queries = await communication.observeQuery()
        context.spawn { [self] in
            for await query in queries where query.objectTypes?.contains(HelloTask.objectType) == true {
                let tasks = self.state.withLock { Array($0.tasks.values) }.sorted { $0.number < $1.number }
                let answer = query.objectFilter.apply(to: tasks)
                try query.retrieve(RetrieveEvent(objects: answer))
                self.narrator.event("service", "Query→Retrieve", "\(answer.count) of \(tasks.count) tasks")
            }
        }

        // Finished tasks reported by the clients.
        let progress = try await communication.observeChannel(HelloWorld.progressChannel)
        context.spawn { [self] in
            for await report in progress {
                guard let done = report.object as? HelloTask, done.state == .done else { continue }
                let recorded = self.state.withLock { state -> Bool in
                    guard state.tasks[done.objectID]?.state == .assigned else { return false }
                    state.tasks[done.objectID] = done
                    return true
                }
                guard recorded else { continue }
                try self.lifecycle.readvertiseDiscoverableObject(done)
                try context.logInfo("task #\(done.number) done: \(done.greeting ?? "")", tags: "hello-world")
                self.narrator.reach(.taskDone(number: done.number, by: done.assignee?.rawValue ?? "?"))
            }
        }

        // Clients find the service by discovering its descriptor.
        try await self.lifecycle.advertiseDiscoverableObject(
            CoatyObject(objectType: HelloWorld.serviceType, name: "Hello service")
        )
        self.narrator.event("service", "Advertise", "\(HelloWorld.serviceType) \"Hello service\" (discoverable)")
    }

    /// The service agent's identity id, once initialised.
    var identityID: ObjectID? { self.state.withLock { $0.context?.identity.objectID } }

    /// Offers task number `number`.
    func offer(_ number: Int) throws {
        guard let context = self.state.withLock({ $0.context }) else { return }
        let recipient = HelloWorld.recipients[(number - 1) % HelloWorld.recipients.count]
        let task = HelloTask(number: number, recipient: recipient, parentObjectID: context.identity.objectID)
        self.state.withLock { $0.tasks[task.objectID] = task }
        try self.lifecycle.readvertiseDiscoverableObject(task)
        self.narrator.event("service", "Advertise", "\(HelloTask.objectType) #\(number) \"\(task.name)\"")
    }
}
