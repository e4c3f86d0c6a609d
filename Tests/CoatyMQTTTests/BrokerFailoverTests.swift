import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyModel
import Synchronization
import TestSupport
import Testing

/// Agents given two brokers fail over to the second when the first dies, rejoin there, and keep
/// answering calls, each exactly once (issue 21).
@Suite(.enabled(if: Mosquitto.isAvailable, "mosquitto is not installed"), .timeLimit(.minutes(1)))
struct BrokerFailoverTests {
    @Test func callsAreAnsweredAfterTheBrokerInUseDies() async throws {
        let firstPort = try Mosquitto.freePort()
        let first = try await Mosquitto.start(port: firstPort)
        defer { Mosquitto.kill(first) }
        try await Mosquitto.withRunning { second in
            let managers = ["caller", "callee"].map { name in
                CommunicationManager(
                    transport: MQTTTransport(
                        configuration: .init(
                            brokerURL: "mqtt://127.0.0.1:\(firstPort)",
                            failoverBrokerURLs: [second.url],
                            connectTimeout: .seconds(5)
                        )
                    ),
                    configuration: .init(
                        identity: Identity(name: name),
                        initialReconnectDelay: .milliseconds(20),
                        maximumReconnectDelay: .milliseconds(200),
                        logger: .disabled
                    )
                )
            }
            let (caller, callee) = (managers[0], managers[1])
            let handled = Mutex<[Int]>([])
            var states = managers.map { $0.observeCommunicationState().makeAsyncIterator() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in managers.indices {
                    group.addTask { try await managers[index].run() }
                    try await Self.wait(for: .online, on: &states[index])
                }
                _ = try await callee.handleCalls("com.example.echo") { call in
                    let number = call.parameter(at: 0)?.intValue ?? -1
                    handled.withLock { $0.append(number) }
                    try call.returnResult(.int(number))
                }
                func call(_ number: Int) async throws -> Int? {
                    let returns = try await caller.call(
                        CallEvent(operation: "com.example.echo", parameters: [.int(number)])
                    )
                    return try await returns.first(timeout: .seconds(10)).result?.intValue
                }
                #expect(try await call(1) == 1)

                Mosquitto.kill(first)
                // Both lose the first broker and get online again, on the second.
                for index in managers.indices {
                    try await Self.wait(for: .offline, on: &states[index])
                    try await Self.wait(for: .online, on: &states[index])
                }
                for number in 2...5 { #expect(try await call(number) == number) }
                // Any duplicate of an earlier call would reach the callee before this last one.
                #expect(try await call(6) == 6)
                #expect(handled.withLock { $0 } == [1, 2, 3, 4, 5, 6])
                for manager in managers { manager.finish() }
                try await group.waitForAll()
            }
        }
    }

    /// Waits until the state stream yields `state`; throws when it ends first (the test was
    /// cancelled by its time limit, or the manager stopped).
    private static func wait(
        for state: CommunicationState,
        on states: inout EventStream<CommunicationState>.AsyncIterator
    ) async throws {
        while let next = await states.next() {
            if next == state { return }
        }
        throw CancellationError()
    }
}
