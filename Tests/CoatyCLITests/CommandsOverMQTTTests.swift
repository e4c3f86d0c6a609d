import CoatyBroker
import CoatyCommunication
import CoatyMQTT
import CoatyModel
import CoatyTransport
import Testing

@testable import CoatyCLI

/// The client subcommands end to end over MQTT through the embedded broker, in-process.
@Suite(.timeLimit(.minutes(1)))
struct CommandsOverMQTTTests {
    @Test func discoverFindsAnAgentAndEveryoneLeavesGracefully() async throws {
        try await MQTTBroker.withRunning { broker in
            let url = "mqtt://127.0.0.1:\(broker.port)"
            let agent = CommunicationManager(
                transport: MQTTTransport(brokerURL: url),
                configuration: .init(identity: Identity(name: "Lamp"))
            )
            try await withThrowingTaskGroup(of: Void.self) { group in
                let states = agent.observeCommunicationState()
                group.addTask { try await agent.run() }
                _ = await states.first { $0 == .online }

                let lines = LineSink()
                var options = DiscoverOptions()
                options.connection.broker = url
                // Discover listens for its whole window: long enough for a loaded machine, where 0.5 s
                // once missed the answer in a full run.
                options.timeoutSeconds = 3
                let found = try await DiscoverCommand.run(
                    options,
                    transport: try TransportFactory.make(options.connection)
                ) {
                    lines.append($0)
                }
                #expect(found == 1)
                #expect(lines.lines.contains { $0.hasPrefix("Lamp  ") })

                // finish() must make run() return over MQTT (it once hung in the transport's close wait).
                agent.finish()
                try await group.waitForAll()
            }
        }
    }

    /// `coaty monitor --sys` shows the embedded broker's `$SYS` statistics, as mosquitto_sub does.
    @Test func monitorShowsTheBrokersStatistics() async throws {
        var configuration = MQTTBroker.Configuration()
        configuration.systemTopicInterval = .milliseconds(100)
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            var options = MonitorOptions()
            options.connection.broker = "mqtt://127.0.0.1:\(broker.port)"
            options.showSystemTopics = true
            options.count = 2
            let lines = LineSink()
            try await MonitorCommand.run(options, transport: try TransportFactory.make(options.connection)) {
                lines.append($0)
            }
            #expect(lines.lines.count == 2)
            #expect(lines.lines.allSatisfy { $0.contains("  $SYS/broker/") && $0.contains(" = ") }, "\(lines.lines)")
        }
    }

    @Test func monitorFailsClearlyWhenNoBrokerListens() async throws {
        var options = MonitorOptions()
        options.connection.broker = "mqtt://127.0.0.1:1"
        await #expect {
            try await MonitorCommand.run(options, transport: try TransportFactory.make(options.connection)) { _ in }
        } throws: { error in
            "\(error)".hasPrefix("cannot reach the broker at mqtt://127.0.0.1:1: ")
        }
    }

    /// A broker that is not there: the reason names the address, so the message names it once.
    @Test func discoverNamesAnUnreachableBrokerOnce() async throws {
        var options = DiscoverOptions()
        options.connection.broker = "mqtt://127.0.0.1:1"
        await #expect {
            _ = try await DiscoverCommand.run(options, transport: try TransportFactory.make(options.connection)) { _ in
            }
        } throws: { error in
            let text = "\(error)"
            return text.hasPrefix("cannot reach the broker at mqtt://127.0.0.1:1: ")
                && text.contains("Connection refused")
                && text.ranges(of: "127.0.0.1:1").count == 2  // the URL, and the socket call
        }
    }

    /// A broker that refuses the login: the error says so, not only that the broker is unreachable.
    @Test func discoverSaysWhyTheBrokerCannotBeReached() async throws {
        let configuration = MQTTBroker.Configuration(credentials: .init(username: "user", password: "secret"))
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            var options = DiscoverOptions()
            options.connection.broker = "mqtt://127.0.0.1:\(broker.port)"
            await #expect {
                _ = try await DiscoverCommand.run(options, transport: try TransportFactory.make(options.connection)) {
                    _ in
                }
            } throws: { error in
                let text = "\(error)"
                return text.hasPrefix(
                    "the broker at mqtt://127.0.0.1:\(broker.port) refused the connection: not authorised"
                )
            }
        }
    }
}
