import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyModel
import CoatySockets
import CoatyTransport
import Foundation
import Glibc
import TestSupport
import Testing

/// Coaty agents in separate processes talking through mosquitto: this test process runs one
/// `CommunicationManager` over `MQTTTransport`, the `CoatyTestAgent` executable the other.
@Suite(.enabled(if: Mosquitto.isAvailable, "mosquitto is not installed"), .timeLimit(.minutes(2)))
struct AgentProcessTests {
    /// The agent executable, built next to the test bundle.
    static var agentPath: String? { ChildProcess.builtExecutable(named: "CoatyTestAgent") }

    /// A running agent process; closing its stdin makes it leave gracefully.
    struct AgentProcess {
        let process: ChildProcess
        let identityID: ObjectID

        static func start(brokerURL: String, name: String) throws -> AgentProcess {
            let path = try #require(AgentProcessTests.agentPath, "CoatyTestAgent is not built")
            let identityID = ObjectID.random()
            let process = try ChildProcess.spawn(path, [brokerURL, identityID.rawValue, name], input: .pipe)
            return AgentProcess(process: process, identityID: identityID)
        }

        func leave() async {
            self.process.closeInput()
            _ = await self.process.waitForExit()
        }

        func kill() {
            Mosquitto.kill(self.process)
        }
    }

    /// Runs a manager over MQTT in this process until `body` returns.
    private func withLocalAgent<Result: Sendable>(
        brokerURL: String,
        reconnectDelay: Duration = .milliseconds(50),
        _ body: (CommunicationManager) async throws -> Result
    ) async throws -> Result {
        let manager = CommunicationManager(
            transport: MQTTTransport(brokerURL: brokerURL),
            configuration: .init(
                identity: Identity(name: "TestAgent"),
                initialReconnectDelay: reconnectDelay,
                maximumReconnectDelay: reconnectDelay * 4
            )
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            let states = manager.observeCommunicationState()
            group.addTask { try await manager.run() }
            _ = await states.first { $0 == .online }
            do {
                let result = try await body(manager)
                manager.finish()
                try await group.waitForAll()
                return result
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }

    @Test func twoAgentProcessesExchangeEveryEventPatternThroughMosquitto() async throws {
        try await Mosquitto.withRunning { broker in
            try await self.withLocalAgent(brokerURL: broker.url) { manager in
                let advertises = await manager.observeAdvertise(coreType: .identity)
                let deadvertises = await manager.observeDeadvertise()
                let echoes = try await manager.observeAdvertise(objectType: "coaty.test.Echo")
                let pongs = try await manager.observeRaw("coaty-test/pong")
                let agent = try AgentProcess.start(brokerURL: broker.url, name: "RemoteAgent")
                defer { agent.kill() }

                // Advertise: the remote agent joins (its subscriptions are in place before it advertises).
                let joined = try #require(await advertises.first { $0.object.objectID == agent.identityID })
                #expect(joined.object.name == "RemoteAgent")

                // Discover → Resolve (answered by the remote manager's identity responder).
                let resolve = try await manager.discover(.byObjectID(agent.identityID)).first(timeout: .seconds(5))
                #expect(resolve.object?.objectID == agent.identityID)

                // Call → Return.
                let sum = try await manager.call(CallEvent(operation: "coaty.test.add", parameters: [40, 2]))
                    .first(timeout: .seconds(5))
                #expect(sum.result == 42)

                // Raw both ways, arbitrary bytes.
                try await manager.publish(try RawEvent(topic: "coaty-test/ping", payload: [0, 1, 0xFE, 0xFF]))
                #expect(try await pongs.first(timeout: .seconds(5)).payload == [0, 1, 0xFE, 0xFF])

                // Channel → (the agent reacts with) Advertise of a custom object type.
                try await manager.publish(
                    ChannelEvent(channelID: "echo", object: CoatyObject(objectType: "coaty.test.Thing", name: "thing"))
                )
                #expect(try await echoes.first(timeout: .seconds(5)).object.name == "echo of thing")

                // Query → Retrieve with an object filter.
                let retrieve = try await manager.query(
                    try QueryEvent.byObjectTypes(
                        ["coaty.test.Thing"],
                        filter: ObjectFilter(conditions: .single(FilterCondition("name", .like("stored%"))))
                    )
                )
                .first(timeout: .seconds(5))
                #expect(retrieve.objects.map(\.name) == ["stored thing"])

                // Update → Complete (the remote agent observes by object type).
                let thing = CoatyObject(objectType: "coaty.test.Thing", name: "renamed")
                let complete = try await manager.update(try UpdateEvent(thing)).first(timeout: .seconds(5))
                #expect(complete.object.objectID == thing.objectID)
                #expect(complete.object.name == "renamed (updated)")

                // Associate → IO value on the associated route (the remote agent is the IO source).
                let ioSourceID = ObjectID.random()
                let route = IOValueEvent.route(namespace: "-", ioSourceID: ioSourceID)
                let values = try await manager.observeIOValue(route: route)
                try await manager.publish(
                    AssociateEvent(
                        ioContextName: "TestContext",
                        ioSourceID: ioSourceID,
                        ioActorID: .random(),
                        associatingRoute: route
                    )
                )
                let value = try await values.first(timeout: .seconds(5))
                #expect(try AnyCodable(json: value.payload) == ["value": 42])

                // Graceful leave: Deadvertise of the identity, published explicitly (not as will).
                await agent.leave()
                #expect(agent.process.exitStatus == 0)
                let left = try #require(await deadvertises.first { $0.objectIDs.contains(agent.identityID) })
                #expect(left.objectIDs.contains(agent.identityID))
            }
        }
    }

    @Test func killedAgentProcessIsDeadvertisedByItsLastWill() async throws {
        try await Mosquitto.withRunning { broker in
            try await self.withLocalAgent(brokerURL: broker.url) { manager in
                let advertises = await manager.observeAdvertise(coreType: .identity)
                let deadvertises = await manager.observeDeadvertise()
                let agent = try AgentProcess.start(brokerURL: broker.url, name: "Doomed")
                _ = try #require(await advertises.first { $0.object.objectID == agent.identityID })
                agent.kill()  // SIGKILL: no DISCONNECT, so mosquitto publishes the will
                let will = try #require(await deadvertises.first { $0.objectIDs.contains(agent.identityID) })
                #expect(will.objectIDs == [agent.identityID])
            }
        }
    }

    @Test func publicationsQueuedWhileTheBrokerIsDownAreDeliveredAfterItRestarts() async throws {
        let probe = try Mosquitto.freePort()
        var broker: ChildProcess? = try await Mosquitto.start(port: probe)
        defer { broker.map(Mosquitto.kill) }
        let url = "mqtt://127.0.0.1:\(probe)"
        // A long reconnect delay for the publisher, so the subscriber below is in place before it is back.
        try await self.withLocalAgent(brokerURL: url, reconnectDelay: .milliseconds(700)) { manager in
            let states = manager.observeCommunicationState()
            var stateIterator = states.makeAsyncIterator()
            #expect(await stateIterator.next() == .online)
            for index in 0..<5 {
                try await manager.publish(try RawEvent(topic: "coaty-test/seq", string: "before \(index)"))
            }

            // Kill the broker while publishing; wait until the manager has noticed.
            broker.map(Mosquitto.kill)
            broker = nil
            for index in 0..<20 {
                try await manager.publish(try RawEvent(topic: "coaty-test/seq", string: "racing \(index)"))
            }
            #expect(await stateIterator.next() == .offline)
            for index in 0..<20 {
                try await manager.publish(try RawEvent(topic: "coaty-test/seq", string: "offline \(index)"))
            }

            // Restart on the same port and subscribe before the publisher reconnects.
            broker = try await Mosquitto.start(port: probe)
            let inbox = Inbox()
            try await MQTTTransport(brokerURL: url).withConnection(
                .init(clientID: "observer"),
                onMessage: inbox.onMessage
            ) {
                connection in
                try await connection.subscribe(to: [TopicFilter("coaty-test/seq")])
                #expect(await stateIterator.next() == .online)
                // Publications made before the manager noticed the loss may have gone to the dead socket
                // (QoS 0); everything published while it was offline arrives after the re-join, in order.
                var offline: [String] = []
                for await message in inbox.stream {
                    let text = String(decoding: message.payload, as: UTF8.self)
                    if text.hasPrefix("offline") { offline.append(text) }
                    if text == "offline 19" { break }
                }
                #expect(offline == (0..<20).map { "offline \($0)" })
            }
        }
    }
}
