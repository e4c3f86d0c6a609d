import CoatyCommunication
import CoatyCore
import CoatyModel
import CoatyTransport
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `coaty monitor`: a Coaty-aware mosquitto_sub that prints every event in a namespace.
enum MonitorCommand {
    /// Connects through `transport`, subscribes to all Coaty events of the namespace (or of every
    /// namespace, and with `--sys` to the broker's `$SYS/#` statistics) and writes one line per message
    /// to `output` until `count` lines were shown or the task is cancelled.
    ///
    /// When the connection is lost, it says so through `report` (standard error), reconnects every
    /// `reconnectDelay` until the broker is back, as mosquitto_sub does, and subscribes again.
    ///
    /// Messages wait in a buffer of 10,000 while the output is slow; when it overflows, the oldest are
    /// dropped and the count is reported through `report` before the next line.
    ///
    /// - Parameters:
    ///   - usesColour: Whether to colour text lines (see ``MonitorStyle``).
    ///   - ready: Called each time the subscription is in place (after each reconnect too).
    /// - Throws: ``CLIError`` saying why, when the first connection cannot be made.
    static func run(
        _ options: MonitorOptions,
        transport: any Transport,
        usesColour: Bool = false,
        reconnectDelay: Duration = .seconds(1),
        ready: @escaping @Sendable () -> Void = {},
        report: @escaping @Sendable (String) -> Void = { Console.error($0) },
        output: @escaping @Sendable (String) -> Void
    ) async throws {
        let namespace = options.allNamespaces ? "+" : options.connection.namespace
        let events = try TopicFilter("\(CoatyTopic.protocolName)/\(CoatyTopic.protocolVersion)/\(namespace)/#")
        let filters = options.showSystemTopics ? [events, try TopicFilter("$SYS/#")] : [events]
        let (lines, buffer) = MonitorBuffer.make(capacity: 10_000)
        var formatter = MonitorFormatter()
        formatter.showPayload = options.showPayload
        formatter.usesColour = usesColour && !options.json
        try await withThrowingTaskGroup(of: Void.self) { [formatter] group in
            group.addTask {
                try await Self.connect(
                    options,
                    filters: filters,
                    transport: transport,
                    reconnectDelay: reconnectDelay,
                    buffer: buffer,
                    ready: ready,
                    report: report
                )
            }
            group.addTask {
                await Self.print(
                    lines,
                    formatter: formatter,
                    buffer: buffer,
                    options: options,
                    report: report,
                    output: output
                )
            }
            // Printing ends when enough lines were shown; connecting only by failing to connect at first.
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// Connects, subscribes and waits until the connection closes; then again after `reconnectDelay`,
    /// until cancelled. Throws only if the first connection fails.
    private static func connect(
        _ options: MonitorOptions,
        filters: [TopicFilter],
        transport: any Transport,
        reconnectDelay: Duration,
        buffer: MonitorBuffer,
        ready: @escaping @Sendable () -> Void,
        report: @escaping @Sendable (String) -> Void
    ) async throws {
        let clientID = "CoatyMonitor" + String(ObjectID.random().rawValue.filter { $0 != "-" }.prefix(11))
        var hasConnected = false
        var isLost = false
        while !Task.isCancelled {
            do {
                try await transport.withConnection(
                    TransportConnectOptions(clientID: clientID),
                    onMessage: { message in buffer.yield(message) }
                ) { connection in
                    try await connection.subscribe(to: filters)
                    if isLost { report("coaty monitor: reconnected to the broker\n") }
                    hasConnected = true
                    isLost = false
                    ready()
                    await connection.waitUntilClosed()
                }
            } catch {
                if Task.isCancelled { return }
                guard hasConnected else {
                    throw CLIError(JoinFailure.message(for: error, brokers: options.connection.brokers))
                }
                if !isLost { report("coaty monitor: lost the connection to the broker (\(error)); reconnecting\n") }
                isLost = true
            }
            try? await Task.sleep(for: reconnectDelay)
        }
    }

    private static func print(
        _ lines: AsyncStream<TransportMessage>,
        formatter: MonitorFormatter,
        buffer: MonitorBuffer,
        options: MonitorOptions,
        report: @Sendable (String) -> Void,
        output: @Sendable (String) -> Void
    ) async {
        var formatter = formatter
        var shown = 0
        for await message in lines {
            let line: String?
            if options.json {
                formatter.learnNames(from: try? AnyCodable(json: message.payload))
                let time = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
                line = MonitorJSON.line(topic: message.topic, payload: message.payload, time: time) {
                    formatter.agentName($0)
                }
            } else {
                line = formatter.line(topic: message.topic, payload: message.payload, time: StandardStream.timeOfDay())
            }
            guard let line else { continue }
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
