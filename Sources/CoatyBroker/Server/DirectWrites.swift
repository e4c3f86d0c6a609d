import CoatyCore

/// The outboxes a reader claimed while handling the packets of one read, to write directly at its end
/// (see ``OutboxState``): each once, so a read carrying many PUBLISHes makes one write per receiver.
///
/// Owned by one reader (``ClientConnection/ReaderState``); ``PacketHandler`` writes them before it
/// returns to the reader, so no claimed outbox waits across a suspension.
struct DirectWrites {
    private var outboxes: [Outbox] = []
    /// Whether outboxes whose stream encrypts (TLS) may be claimed too: only for a read the reactor's
    /// thread handles. A burst goes to the reader's task, and its receivers' writer tasks then put
    /// many messages in each TLS record instead of one read's worth.
    var includesEncrypting = false

    /// Whether an outbox may be claimed, given whether its stream encrypts.
    func admits(encrypting: Bool) -> Bool {
        !encrypting || self.includesEncrypting
    }

    /// Whether no outbox is claimed.
    var isEmpty: Bool { self.outboxes.isEmpty }

    /// Adds an outbox that ``Outbox/enqueue(_:droppable:directWrites:)`` claimed.
    mutating func add(_ outbox: Outbox) {
        self.outboxes.append(outbox)
    }

    /// Writes every claimed outbox (``Outbox/writeDirectly(traffic:logger:)``) and forgets them; the
    /// reader's own, `last`, after the others.
    ///
    /// What the read routed to other clients goes first: that is what someone waits for, while the
    /// sender's acknowledgements seldom are. A Coaty request subscribes its response topic and
    /// publishes the call in one write, and the call then leaves a system call earlier than the
    /// SUBACK. Each connection's packets keep their order; MQTT orders nothing across connections.
    mutating func perform(traffic: BrokerTraffic, logger: CoatyLogger, last: Outbox) {
        self.performOthers(traffic: traffic, logger: logger, own: last)
        guard !self.outboxes.isEmpty else { return }
        last.writeDirectly(traffic: traffic, logger: logger)
        self.outboxes.removeAll(keepingCapacity: true)
    }

    /// Writes the claimed outboxes of other clients now and keeps `own` claimed for the end of the
    /// read: called before a packet that routes nothing but takes time, such as a SUBSCRIBE or an
    /// UNSUBSCRIBE, so that what an earlier PUBLISH of the same read routed does not wait for it.
    /// A Coaty request's write carries its response subscription, the request and the release of
    /// the previous request's response subscription.
    mutating func performOthers(traffic: BrokerTraffic, logger: CoatyLogger, own: Outbox) {
        guard !self.outboxes.isEmpty else { return }
        var ownIsClaimed = false
        for outbox in self.outboxes {
            if outbox === own {
                ownIsClaimed = true
            } else {
                outbox.writeDirectly(traffic: traffic, logger: logger)
            }
        }
        self.outboxes.removeAll(keepingCapacity: true)
        if ownIsClaimed { self.outboxes.append(own) }
    }
}
