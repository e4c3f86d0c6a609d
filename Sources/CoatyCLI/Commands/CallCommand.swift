import CoatyCommunication
import CoatyModel
import CoatyTransport
import Synchronization

/// `coaty call`: calls a remote operation and prints the Returns, until the expected number arrived or
/// the timeout ran out.
enum CallCommand {
    /// What came back.
    struct Returns: Equatable {
        /// The Returns that arrived.
        var count = 0
        /// How many of them carry an error.
        var errors = 0
    }

    /// Calls the operation and writes one line per Return to `output`, then a summary line; returns as
    /// soon as `options.count` Returns arrived, else when the timeout runs out.
    ///
    /// - Throws: ``CLIError`` if the parameters are not JSON or the broker cannot be joined.
    static func run(
        _ options: CallOptions,
        transport: any Transport,
        output: @escaping @Sendable (String) -> Void
    ) async throws -> Returns {
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
            let errors = Atomic(0)
            let count = try await AgentSession.collect(returns, for: options.timeoutSeconds, upTo: options.count) {
                event in
                let source = event.origin?.sourceID.map { String($0.rawValue.prefix(8)) } ?? "?"
                switch event.outcome {
                case .result(let value):
                    output("\(source): result \(value.jsonString)")
                case .error(let error):
                    errors.add(1, ordering: .relaxed)
                    output("\(source): error \(error.code) \(error.message)")
                }
            }
            output("\(count) of \(options.count) return(s) for \(options.operation)")
            return Returns(count: count, errors: errors.load(ordering: .relaxed))
        }
    }

    /// Why the command fails for `returns`, or nil when it succeeded: no Return within the timeout, or
    /// a Return with an error.
    static func failure(_ returns: Returns, options: CallOptions) -> CLIError? {
        if returns.count == 0 {
            let seconds = options.timeoutSeconds
            let timeout = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
            return CLIError("no agent answered '\(options.operation)' within \(timeout) s")
        }
        if returns.errors > 0 {
            return CLIError(
                "\(returns.errors) of \(returns.count) return(s) for '\(options.operation)' carried an error"
            )
        }
        return nil
    }
}
