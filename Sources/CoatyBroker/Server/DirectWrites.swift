import CoatyCore

/// The outboxes a reader claimed while handling the packets of one read, to write directly at its end
/// (see ``OutboxState``): each once, so a read carrying many PUBLISHes makes one write per receiver.
///
/// Owned by one reader (``ClientConnection/ReaderState``); ``PacketHandler`` writes them before it
/// returns to the reader, so no claimed outbox waits across a suspension.
struct DirectWrites {
    private var outboxes: [Outbox] = []

    /// Whether no outbox is claimed.
    var isEmpty: Bool { self.outboxes.isEmpty }

    /// Adds an outbox that ``Outbox/enqueue(_:droppable:directWrites:)`` claimed.
    mutating func add(_ outbox: Outbox) {
        self.outboxes.append(outbox)
    }

    /// Writes every claimed outbox (``Outbox/writeDirectly(traffic:logger:)``) and forgets them.
    mutating func perform(traffic: BrokerTraffic, logger: CoatyLogger) {
        guard !self.outboxes.isEmpty else { return }
        for outbox in self.outboxes { outbox.writeDirectly(traffic: traffic, logger: logger) }
        self.outboxes.removeAll(keepingCapacity: true)
    }
}
