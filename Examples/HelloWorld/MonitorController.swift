import CoatyCommunication
import CoatyControllers
import CoatyModel

/// The monitor agent's logic: follows agents and tasks with the object lifecycle controller, and prints
/// the Log objects that the other agents' controllers advertise (distributed logging).
final class MonitorController: Controller {
    let name = "monitor"
    private let narrator: Narrator
    private let lifecycle: ObjectLifecycleController
    private let contextBox = ContextBox()

    init(narrator: Narrator, lifecycle: ObjectLifecycleController) {
        self.narrator = narrator
        self.lifecycle = lifecycle
    }

    /// Sets up every observation before the agent connects: they are subscribed on connect, before
    /// the agent's identity is advertised, so no event sent after others see this agent is missed.
    func onInit(context: ControllerContext) async throws {
        self.contextBox.set(context)
        let me = "monitor"
        let agents = try await self.lifecycle.observeObjectLifecycleInfo(coreType: .identity)
        let tasks = try await self.lifecycle.observeObjectLifecycleInfo(objectType: HelloTask.objectType)
        let logs = await context.communication.observeAdvertise(coreType: .log)
        context.spawn { [self] in
            for await change in agents {
                for agent in change.added where agent.name != "monitor" {
                    self.narrator.event(me, "lifecycle", "agent added: \(agent.name)")
                }
                for agent in change.removed {
                    self.narrator.event(me, "lifecycle", "agent left (Deadvertise): \(agent.name)")
                    self.narrator.reach(.agentRemoved(agent.name))
                }
            }
        }
        context.spawn { [self] in
            for await change in tasks {
                for case let task as HelloTask in change.added + change.changed {
                    self.narrator.event(me, "lifecycle", "task #\(task.number) \(task.state.rawValue)")
                }
                for case let task as HelloTask in change.removed {
                    self.narrator.event(me, "lifecycle", "task #\(task.number) removed with its agent")
                }
            }
        }
        context.spawn { [self] in
            for await advertise in logs {
                guard let log = advertise.object as? Log else { continue }
                self.narrator.event(me, "Log", "[\(log.name)] \(log.logMessage)")
            }
        }
    }

}
