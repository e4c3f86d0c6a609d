import CoatyCommunication
import CoatyTransport

/// Collects the messages a connection receives, for tests to await in order.
struct Inbox: Sendable {
    let stream: AsyncStream<TransportMessage>
    let continuation: AsyncStream<TransportMessage>.Continuation

    init() {
        (self.stream, self.continuation) = AsyncStream.makeStream()
    }

    /// The `onMessage` callback to hand to a transport.
    var onMessage: @Sendable (TransportMessage) -> Void {
        { [continuation] message in continuation.yield(message) }
    }

    /// The next `count` messages (fewer if the stream ends).
    func next(_ count: Int) async -> [TransportMessage] {
        var result: [TransportMessage] = []
        guard count > 0 else { return result }
        for await message in self.stream {
            result.append(message)
            if result.count == count { break }
        }
        return result
    }
}
