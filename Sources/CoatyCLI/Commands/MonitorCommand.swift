import CoatyCommunication
import CoatyCore
import CoatyModel

/// `coaty monitor`: a Coaty-aware mosquitto_sub that prints every event in a namespace.
enum MonitorCommand {
    /// Connects through `transport`, subscribes to all Coaty events of the namespace (or of every
    /// namespace) and writes one line per event to `output` until `count` events were shown or the task
    /// is cancelled.
    ///
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
        try await transport.withConnection(
            TransportConnectOptions(clientID: clientID),
            onMessage: { message in continuation.yield(message) }
        ) { connection in
            try await connection.subscribe(to: [filter])
            ready()
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
}
