import CoatyTransport

/// The next message on the tap whose topic satisfies `predicate`.
func next(
    _ messages: inout AsyncStream<TransportMessage>.Iterator,
    where predicate: (String) -> Bool
) async throws -> TransportMessage {
    while let message = await messages.next() {
        if predicate(message.topic) { return message }
    }
    throw CancellationError()
}
