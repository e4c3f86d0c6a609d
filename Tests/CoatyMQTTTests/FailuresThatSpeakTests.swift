import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyModel
import Synchronization
import TestSupport
import Testing

/// A configuration that can never work fails `run()` at once, and a broker that cannot be reached is
/// reported, not a silent hang (issue 21).
@Suite(.timeLimit(.minutes(1)))
struct FailuresThatSpeakTests {
    /// A malformed URL, an unsupported scheme or a port out of range make `run()` throw
    /// `.invalidConfiguration` at once instead of retrying for ever.
    @Test(arguments: ["htp:/x", "amqp://127.0.0.1:5672", "mqtt://127.0.0.1:70000", "mqtt://"])
    func runFailsAtOnceOnABrokerURLThatCanNeverWork(url: String) async throws {
        let manager = CommunicationManager(
            transport: MQTTTransport(brokerURL: url),
            configuration: .init(identity: Identity(name: "misconfigured"), logger: .disabled)
        )
        let diagnostics = manager.observeDiagnostics()
        let error = await #expect(throws: CommunicationError.self) { try await manager.run() }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains(url) == true)
        #expect(manager.communicationState == .offline)
        let reported = await diagnostics.first { $0.kind == .connectionFailed }
        #expect(reported?.reason.contains("not retrying") == true)
    }

    /// An agent that configured no logger writes warnings to standard error: the refused connection
    /// is printed (through a capturing copy of the default logger), reported as a diagnostic, and
    /// named by `connectionFailure`.
    @Test func theDefaultLoggerPrintsARefusedConnection() async throws {
        let defaultLogger = CommunicationManager.Configuration().logger
        #expect(defaultLogger.level == .warning)
        #expect(defaultLogger.handler is StandardErrorLogHandler)

        let lines = Mutex<[String]>([])
        var logger = defaultLogger
        logger.handler = StandardErrorLogHandler { line in lines.withLock { $0.append(line) } }
        let port = try LoopbackPort.unused()
        let manager = CommunicationManager(
            transport: MQTTTransport(brokerURL: "mqtt://127.0.0.1:\(port)"),
            configuration: .init(identity: Identity(name: "lonely"), logger: logger)
        )
        let diagnostics = manager.observeDiagnostics()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await manager.run() }
            let failure = await diagnostics.first { $0.kind == .connectionFailed }
            #expect(failure?.reason.contains("reconnecting in") == true)
            #expect(manager.connectionFailure != nil)
            manager.finish()
            try await group.waitForAll()
        }
        let printed = lines.withLock { $0 }
        #expect(printed.count == 1)
        #expect(printed.first?.hasPrefix("warning coaty: connection failed or lost: ") == true)
        #expect(printed.first?.contains("127.0.0.1:\(port)") == true)
        #expect(printed.first?.hasSuffix("\n") == true)
    }
}
