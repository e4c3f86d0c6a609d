import CoatyCommunication
import CoatyControllers
import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Synchronization
import Testing

/// Records the hooks it sees, in order, into a shared journal.
final class RecordingController: Controller {
    let name: String
    let journal: Journal

    init(name: String, journal: Journal) {
        self.name = name
        self.journal = journal
    }

    func onInit(context: ControllerContext) async throws { self.journal.add("init \(self.name)") }
    func onCommunicationManagerStarting() async throws { self.journal.add("starting \(self.name)") }
    func onCommunicationManagerStopping() async { self.journal.add("stopping \(self.name)") }
    func onDispose() async { self.journal.add("dispose \(self.name)") }
}

final class Journal: Sendable {
    private let entries = Mutex<[String]>([])
    private let added: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation

    init() {
        (self.added, self.continuation) = AsyncStream.makeStream(of: String.self)
    }

    func add(_ entry: String) {
        self.entries.withLock { $0.append(entry) }
        self.continuation.yield(entry)
    }

    var all: [String] { self.entries.withLock { $0 } }

    /// Waits until `entry` has been added (now or earlier).
    func wait(for entry: String) async {
        if self.all.contains(entry) { return }
        for await added in self.added where added == entry { return }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct ContainerTests {
    @Test func hooksRunInOrderAndShutdownDeadvertisesTheIdentity() async throws {
        let bus = InProcessBus()
        let wire = bus.messages()
        let journal = Journal()
        let configuration = Container.Configuration(
            transport: InProcessTransport(bus: bus),
            communication: .init(identity: Identity(name: "Agent"))
        )
        let identity = try await Container.withRunning(
            configuration: configuration,
            controllers: [
                RecordingController(name: "A", journal: journal), RecordingController(name: "B", journal: journal),
            ]
        ) { container in
            #expect(container.communication.communicationState == .online)
            #expect(journal.all == ["init A", "init B", "starting A", "starting B"])
            #expect(container.controller(ofType: RecordingController.self)?.name == "A")
            return container.identity
        }
        #expect(
            journal.all == [
                "init A", "init B", "starting A", "starting B", "stopping B", "stopping A", "dispose B", "dispose A",
            ]
        )
        var topics: [String] = []
        for await message in wire {
            topics.append(message.topic)
            if message.topic.contains("/DAD/") { break }
        }
        #expect(topics.first == "coaty/3/-/ADV:Identity/\(identity.objectID)")
        #expect(topics.last == "coaty/3/-/DAD/\(identity.objectID)")
    }

    @Test func spawnedWorkRunsUntilShutdownAndCanBeCancelled() async throws {
        let journal = Journal()
        final class Spawner: Controller {
            let journal: Journal
            let context = Mutex<ControllerContext?>(nil)
            init(journal: Journal) { self.journal = journal }
            func onInit(context: ControllerContext) async throws { self.context.withLock { $0 = context } }
            func onCommunicationManagerStarting() async throws {
                guard let context = self.context.withLock({ $0 }) else { return }
                let journal = self.journal
                context.spawn {
                    do { try await Task.sleep(for: .seconds(3600)) } catch { journal.add("long work cancelled") }
                }
                let handle = context.spawn {
                    do { try await Task.sleep(for: .seconds(3600)) } catch { journal.add("handle cancelled") }
                }
                handle.cancel()
            }
        }
        try await Container.withRunning(
            configuration: .init(transport: InProcessTransport(bus: InProcessBus())),
            controllers: [Spawner(journal: journal)]
        ) { _ in
            await journal.wait(for: "handle cancelled")
        }
        #expect(Set(journal.all) == ["handle cancelled", "long work cancelled"])
    }

    @Test func aContainerRunsOnce() async throws {
        let container = Container(
            configuration: .init(transport: InProcessTransport(bus: InProcessBus())),
            controllers: []
        )
        container.shutdown()
        try await container.run()
        await #expect { try await container.run() } throws: { ($0 as? CommunicationError)?.code == .alreadyRunning }
    }

    /// A manager that cannot run (here: an invalid namespace) stops the container instead of leaving
    /// it waiting for a shutdown() that nobody calls.
    @Test func aManagerThatFailsStopsTheContainer() async throws {
        let journal = Journal()
        let container = Container(
            configuration: .init(
                transport: InProcessTransport(bus: InProcessBus()),
                communication: .init(namespace: "a/b")
            ),
            controllers: [RecordingController(name: "A", journal: journal)]
        )
        await #expect { try await container.run() } throws: { ($0 as? CommunicationError)?.code == .invalidArgument }
        #expect(journal.all == ["init A", "stopping A", "dispose A"])
    }

    /// When an onInit hook throws, the controllers initialised before it are disposed.
    @Test func aThrowingInitDisposesTheControllersInitialisedBefore() async throws {
        let journal = Journal()
        let container = Container(
            configuration: .init(transport: InProcessTransport(bus: InProcessBus())),
            controllers: [
                RecordingController(name: "A", journal: journal),
                RecordingController(name: "B", journal: journal),
                FailingController(name: "C", journal: journal, failingHook: "init"),
                RecordingController(name: "D", journal: journal),
            ]
        )
        await #expect(throws: HookFailure.self) { try await container.run() }
        #expect(journal.all == ["init A", "init B", "init C", "dispose B", "dispose A"])
    }

    /// withRunning does not run its body when the agent did not start: it rethrows the hook's error.
    @Test(arguments: ["init", "starting"])
    func withRunningSkipsTheBodyWhenAHookThrows(failingHook: String) async throws {
        let journal = Journal()
        await #expect(throws: HookFailure.self) {
            try await Container.withRunning(
                configuration: .init(transport: InProcessTransport(bus: InProcessBus())),
                controllers: [FailingController(name: "A", journal: journal, failingHook: failingHook)]
            ) { _ in journal.add("body") }
        }
        #expect(!journal.all.contains("body"))
    }

    /// withRunning does not run its body when the agent stopped before it came online.
    @Test func withRunningSkipsTheBodyWhenTheAgentCannotRun() async throws {
        let journal = Journal()
        await #expect {
            try await Container.withRunning(
                configuration: .init(
                    transport: InProcessTransport(bus: InProcessBus()),
                    communication: .init(namespace: "a+b")
                ),
                controllers: []
            ) { _ in journal.add("body") }
        } throws: { ($0 as? CommunicationError)?.code == .invalidArgument }
        #expect(journal.all.isEmpty)
    }

    /// Cancelling withRunning while the agent connects ends it without running the body.
    @Test func cancellingBeforeOnlineSkipsTheBody() async throws {
        /// A transport whose connection never comes up.
        struct Unreachable: Transport {
            func withConnection<Result: Sendable>(
                _ options: TransportConnectOptions,
                onMessage: @escaping @Sendable (TransportMessage) -> Void,
                _ body: (any TransportConnection) async throws -> Result
            ) async throws -> Result {
                await Suspension.never()
                throw CancellationError()
            }
        }
        let journal = Journal()
        let task = Task {
            try await Container.withRunning(
                configuration: .init(transport: Unreachable()),
                controllers: [RecordingController(name: "A", journal: journal)]
            ) { _ in journal.add("body") }
        }
        await journal.wait(for: "init A")
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(journal.all == ["init A", "stopping A", "dispose A"])
    }
}

struct HookFailure: Error {}

/// Records its hooks like ``RecordingController`` and throws from one of them.
final class FailingController: Controller {
    let name: String
    let journal: Journal
    let failingHook: String

    init(name: String, journal: Journal, failingHook: String) {
        self.name = name
        self.journal = journal
        self.failingHook = failingHook
    }

    func onInit(context: ControllerContext) async throws {
        self.journal.add("init \(self.name)")
        if self.failingHook == "init" { throw HookFailure() }
    }

    func onCommunicationManagerStarting() async throws {
        self.journal.add("starting \(self.name)")
        if self.failingHook == "starting" { throw HookFailure() }
    }

    func onCommunicationManagerStopping() async { self.journal.add("stopping \(self.name)") }
    func onDispose() async { self.journal.add("dispose \(self.name)") }
}

enum Suspension {
    /// Suspends until the task is cancelled.
    static func never() async {
        let (stream, _) = AsyncStream.makeStream(of: Never.self)
        for await _ in stream {}
    }
}
