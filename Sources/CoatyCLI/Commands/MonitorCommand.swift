import CoatyCommunication
import CoatyCore
import CoatyModel
import CoatyTransport
import Synchronization

/// `coaty monitor`: a Coaty-aware mosquitto_sub that prints every event in a namespace.
enum MonitorCommand {
    /// Connects through `transport`, subscribes to all Coaty events of the namespace (or of every
    /// namespace) and writes one line per event to `output` until `count` events were shown or the task
    /// is cancelled.
    ///
    /// Events wait in a buffer of 10,000 while the output is slow; when it overflows, the oldest are
    /// dropped and the count is reported through `report` (standard error) before the next line.
    ///
    /// - Throws: What the transport throws when it cannot connect; an error when the connection is lost.
    /// - Parameter ready: Called once the subscription is in place.
    static func run(
        _ options: MonitorOptions,
        transport: any Transport,
        ready: @escaping @Sendable () -> Void = {},
        report: @escaping @Sendable (String) -> Void = { Console.error($0) },
        output: @escaping @Sendable (String) -> Void
    ) async throws {
        let namespace = options.allNamespaces ? "+" : options.connection.namespace
        let filter = try TopicFilter("\(CoatyTopic.protocolName)/\(CoatyTopic.protocolVersion)/\(namespace)/#")
        let (lines, buffer) = MonitorBuffer.make(capacity: 10_000)
        let clientID = "CoatyMonitor" + String(ObjectID.random().rawValue.filter { $0 != "-" }.prefix(11))
        let isLost = try await transport.withConnection(
            TransportConnectOptions(clientID: clientID),
            onMessage: { message in buffer.yield(message) }
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
                    await Self.print(lines, buffer: buffer, options: options, output: output, report: report)
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
        buffer: MonitorBuffer,
        options: MonitorOptions,
        output: @Sendable (String) -> Void,
        report: @Sendable (String) -> Void
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
            let dropped = buffer.takeDropped()
            if dropped > 0 {
                report("coaty monitor: \(dropped) earlier events dropped, the output is slower than the traffic\n")
            }
            output(line)
            shown += 1
            if let count = options.count, shown >= count { break }
        }
    }
}

/// The events waiting to be printed: the newest `capacity` are kept, and the dropped ones counted.
final class MonitorBuffer: Sendable {
    private let continuation: AsyncStream<TransportMessage>.Continuation
    private let dropped = Atomic<Int>(0)

    private init(continuation: AsyncStream<TransportMessage>.Continuation) {
        self.continuation = continuation
    }

    /// A buffer holding at most `capacity` events, and the stream that reads them.
    static func make(capacity: Int) -> (AsyncStream<TransportMessage>, MonitorBuffer) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: TransportMessage.self,
            bufferingPolicy: .bufferingNewest(capacity)
        )
        return (stream, MonitorBuffer(continuation: continuation))
    }

    /// Buffers `message`, dropping the oldest waiting one if the buffer is full.
    func yield(_ message: TransportMessage) {
        if case .dropped = self.continuation.yield(message) { self.dropped.add(1, ordering: .relaxed) }
    }

    /// How many events were dropped since the last call.
    func takeDropped() -> Int {
        self.dropped.exchange(0, ordering: .relaxed)
    }
}
