import CoatyCommunication
import CoatyModel
import CoatyTransport

/// `coaty call`: calls a remote operation and prints every Return within the timeout.
enum CallCommand {
    static func run(
        _ options: CallOptions,
        transport: any Transport,
        output: @escaping @Sendable (String) -> Void
    ) async throws -> Int {
        let parameters: AnyCodable?
        do {
            parameters = try options.parameters.map { try AnyCodable(json: $0) }
        } catch {
            throw CLIError("'--params' is not valid JSON: \(error)")
        }
        let call = try CallEvent(operation: options.operation, parameters: parameters)
        return try await AgentSession.with(name: "coaty call", connection: options.connection, transport: transport) {
            manager in
            let returns = try await manager.call(call)
            let count = try await AgentSession.collect(returns, for: options.timeoutSeconds) { event in
                let source = event.origin?.sourceID.map { String($0.rawValue.prefix(8)) } ?? "?"
                switch event.outcome {
                case .result(let value): output("\(source): result \(value.jsonString)")
                case .error(let error): output("\(source): error \(error.code) \(error.message)")
                }
            }
            output("\(count) return(s) for \(options.operation)")
            return count
        }
    }
}
