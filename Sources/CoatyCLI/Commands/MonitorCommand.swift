import CoatyCommunication
import CoatyCore
import CoatyModel

/// `coaty monitor`: a Coaty-aware mosquitto_sub that prints every event in a namespace.
enum MonitorCommand {
    /// Connects through `transport`, subscribes to all Coaty events of the namespace (or of every
    /// namespace) and writes one line per event to `output` until `count` events were shown or the task
    /// is cancelled.
    ///
    /// - Throws: What the transport throws when it cannot connect; an error when the connection is lost.
    /// - Parameter ready: Called once the subscription is in place.
    static func run(
        _ options: MonitorOptions,
        transport: any Transport,
        ready: @escaping @Sendable () -> Void = {},
        output: @escaping @Sendable (String) -> Void
    ) async throws {
        let namespace = options.allNamespaces ? "+" : options.connection.namespace
        let filter = try TopicFilter("\(CoatyTopic.protocolName)/\(CoatyTopic.protocolVersion)/\(namespace)/#")
        let (lines, continuation) = AsyncStream.makeStream(
            of: TransportMessage.self,
            bufferingPolicy: .bufferingNewest(10_000)
        )
        let clientID = "CoatyMonitor" + String(ObjectID.random().rawValue.filter { $0 != "-" }.prefix(11))
        let isLost = try await transport.withConnection(
            TransportConnectOptions(clientID: clientID),
            onMessage: { message in continuation.yield(message) }
        ) { connection in
            try await connection.subscribe(to: [filter])
            ready()
            // Printing ends when enough events were shown or the connection closes (the broker went away).
            return await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    await connection.waitUntilClosed()
                    return !Task.isCancelled
                }
                group.addTask {
                    await Self.print(lines, options: options, output: output)
                    return false
                }
                defer { group.cancelAll() }
                return await group.next() ?? false
            }
        }
        if isLost { throw CLIError("lost the connection to the broker at \(options.connection.broker)") }
    }

    private static func print(
        _ lines: AsyncStream<TransportMessage>,
        options: MonitorOptions,
        output: @Sendable (String) -> Void
    ) async {
        var formatter = MonitorFormatter()
        formatter.showPayload = options.showPayload
        var shown = 0
        for await message in lines {
            guard
                let line = formatter.line(
                    topic: message.topic,
                    payload: message.payload,
                    time: StandardStream.timeOfDay()
                )
            else { continue }
            output(line)
            shown += 1
            if let count = options.count, shown >= count { break }
        }
    }
}
