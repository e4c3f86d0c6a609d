import CoatyCore
import CoatyMQTTPackets
import Synchronization

extension PacketHandler {
    /// Handles SUBSCRIBE: validates the filters, refuses those the access control list denies and
    /// those past the client's limit (return code 0x80), subscribes the rest and answers with SUBACK,
    /// then sends the retained messages they match.
    ///
    /// A Coaty request subscribes a response filter of its own: this runs once per request, before
    /// the request itself is routed. Without an access control list no list of permissions is made,
    /// and the event's list of filters only for an observer.
    func handleSubscribe(
        _ subscribe: MQTTSubscribePacket,
        session: SessionID,
        state: ReaderState,
        outbox: Outbox
    ) -> CloseReason? {
        var filters: [(filter: TopicFilter, qos: QualityOfService)] = []
        filters.reserveCapacity(subscribe.subscriptions.count)
        for subscription in subscribe.subscriptions {
            guard let filter = try? TopicFilter(subscription.filter) else {
                return .protocolViolation("invalid topic filter '\(subscription.filter)'")
            }
            guard SubscriptionTrie.admits(subscription.filter) else { return Self.tooManyLevels("topic filter") }
            filters.append((filter, subscription.qos.qualityOfService))
        }
        let logger = self.broker.logger
        logger.debug(
            "subscribe",
            metadata: [
                "client": state.clientID ?? "",
                "filters": filters.map { "\($0.filter):\($0.qos.rawValue)" }.joined(separator: ","),
            ]
        )
        // `nil`: every filter is permitted.
        var permitted: [Bool]?
        if let access = state.access {
            let checks = filters.map { access.allowsSubscription(to: TopicLevels($0.filter.rawValue)) }
            if checks.contains(false) {
                logger.notice(
                    "subscriptions refused by the access control list",
                    metadata: [
                        "client": state.clientID ?? "",
                        "filters": zip(filters, checks).filter { !$1 }.map { $0.0.filter.rawValue }.joined(
                            separator: ","
                        ),
                    ]
                )
            }
            permitted = checks
        }
        let (reason, granted): (CloseReason?, [QualityOfService?]) = self.broker.core.withLock { core in
            // Its own outputs array, not `withOutputs`: the SUBACK goes through the reader's direct
            // writes before the retained messages the subscriptions send are dispatched to them.
            var outputs: [BrokerSessions.Output] = []
            let requested = permitted.map { zip(filters, $0).filter { $1 }.map(\.0) } ?? filters
            let subscribed = core.sessions.subscribe(session, to: requested, into: &outputs)
            var next = subscribed.makeIterator()
            let granted = filters.indices.map { (permitted?[$0] ?? true) ? next.next() ?? nil : nil }
            let suback = MQTTSubAckPacket(
                packetID: subscribe.packetID,
                returnCodes: granted.map { $0.map { .granted(MQTTQoS($0)) } ?? .failure }
            )
            let reason = Self.reply(.suback(suback), on: outbox, state: state)
            core.dispatch(outputs, directWrites: &state.directWrites)
            return (reason, granted)
        }
        let permittedCount = permitted?.count(where: { $0 }) ?? filters.count
        let acceptedCount = granted.count(where: { $0 != nil })
        if acceptedCount < permittedCount {
            logger.notice(
                "subscriptions refused: the client reached its limit",
                metadata: [
                    "client": state.clientID ?? "",
                    "refused": "\(permittedCount - acceptedCount)",
                    "limit": "\(self.broker.configuration.maximumSubscriptionsPerClient)",
                ]
            )
        }
        if reason == nil, acceptedCount > 0 {
            self.broker.emit(
                .subscribed(
                    clientID: state.clientID ?? "",
                    filters: zip(filters, granted).compactMap { $1 == nil ? nil : $0.filter.rawValue }
                )
            )
        }
        return reason
    }
}
