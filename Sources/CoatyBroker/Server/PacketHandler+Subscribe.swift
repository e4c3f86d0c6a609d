import CoatyCore
import CoatyMQTTPackets
import Synchronization

extension PacketHandler {
    /// A SUBSCRIBE whose filters are valid, with what the access control list permits.
    struct SubscribeRequest {
        let packetID: UInt16
        let filters: [(filter: TopicFilter, qos: QualityOfService)]
        /// Whether each filter is permitted; `nil`: every one is.
        let permitted: [Bool]?

        /// Whether a filter of the request matches `topic`.
        func matches(_ topic: String) -> Bool {
            self.filters.contains { $0.filter.matches(topic) }
        }
    }

    /// Handles SUBSCRIBE: validates the filters, refuses those the access control list denies and
    /// those past the client's limit (return code 0x80), subscribes the rest and answers with SUBACK,
    /// then sends the retained messages they match.
    ///
    /// A Coaty request subscribes a response filter of its own: this runs once per request, and the
    /// request comes right behind it (see ``handle(_:then:session:state:outbox:)``). Without an
    /// access control list no list of permissions is made, and the event's list of filters only for
    /// an observer.
    func handleSubscribe(
        _ subscribe: MQTTSubscribePacket,
        session: SessionID,
        state: ReaderState,
        outbox: Outbox
    ) -> CloseReason? {
        switch self.admit(subscribe, state: state) {
        case .close(let reason):
            return reason
        case .subscribe(let request):
            return self.subscribeAndReport(request, session: session, state: state, outbox: outbox)
        }
    }

    /// Subscribes an admitted request with the broker's state locked, then reports it.
    private func subscribeAndReport(
        _ request: SubscribeRequest,
        session: SessionID,
        state: ReaderState,
        outbox: Outbox
    ) -> CloseReason? {
        let (reason, granted) = self.broker.core.withLock { core in
            self.subscribe(request, session: session, state: state, outbox: outbox, core: &core)
        }
        self.report(request, granted: granted, closing: reason != nil, state: state)
        return reason
    }

    /// Handles a SUBSCRIBE and the QoS 0 PUBLISH that came right behind it in the same read, as a
    /// Coaty request's write has them: the response subscription, then the request.
    ///
    /// If no filter of the SUBSCRIBE matches the PUBLISH's topic and the PUBLISH is routed, both are
    /// handled with the broker's state locked once, and what the PUBLISH routed is written between
    /// them: the request leaves before the subscription's work (the trie, the retained messages, the
    /// SUBACK), yet no answer to it can be routed before the subscription is in place, since routing
    /// takes the same lock. Nothing else can tell the order: the subscription would not have received
    /// the PUBLISH, a QoS 0 PUBLISH has no acknowledgement to overtake the SUBACK, and if one of the
    /// publisher's own subscriptions matches the topic, the two are handled in order after all, so
    /// that its copy does not overtake the SUBACK either. Otherwise they are handled in order.
    /// Returns a reason to close, the SUBSCRIBE's first.
    func handle(
        _ subscribe: MQTTSubscribePacket,
        then publish: MQTTPublishPacket,
        session: SessionID,
        state: ReaderState,
        outbox: Outbox
    ) -> CloseReason? {
        let request: SubscribeRequest
        switch self.admit(subscribe, state: state) {
        case .close(let reason): return reason
        case .subscribe(let admitted): request = admitted
        }
        let admission =
            publish.qos == .atMostOnce && !request.matches(publish.topic)
            ? self.admit(publish, state: state, outbox: outbox) : nil
        guard case .route(let message)? = admission else {
            if let reason = self.subscribeAndReport(request, session: session, state: state, outbox: outbox) {
                return reason
            }
            if case .handled(let reason)? = admission { return reason }
            return self.handlePublish(publish, session: session, state: state, outbox: outbox)
        }
        let (subscribed, published) = self.broker.core.withLock { core in
            // The request's filters do not match the topic, so subscribing leaves its subscribers as found.
            let subscribers = core.sessions.subscribers(of: message.topic)
            func route(_ core: inout MQTTBroker.Core) -> CloseReason? {
                self.route(
                    message,
                    of: publish,
                    to: subscribers,
                    session: session,
                    state: state,
                    outbox: outbox,
                    core: &core
                )
            }
            if subscribers[session] != nil {
                // The publisher's own subscription would get the PUBLISH ahead of the SUBACK.
                let subscribed = self.subscribe(request, session: session, state: state, outbox: outbox, core: &core)
                return (subscribed, subscribed.reason == nil ? route(&core) : nil)
            }
            let published = route(&core)
            state.directWrites?.performOthers(traffic: self.broker.traffic, logger: self.broker.logger, own: outbox)
            return (self.subscribe(request, session: session, state: state, outbox: outbox, core: &core), published)
        }
        self.report(request, granted: subscribed.granted, closing: subscribed.reason != nil, state: state)
        return subscribed.reason ?? published
    }

    /// What the checks before subscribing make of a SUBSCRIBE.
    enum SubscribeAdmission {
        case subscribe(SubscribeRequest)
        case close(CloseReason)
    }

    /// Validates a SUBSCRIBE's filters and checks them against the access control list.
    private func admit(_ subscribe: MQTTSubscribePacket, state: ReaderState) -> SubscribeAdmission {
        var filters: [(filter: TopicFilter, qos: QualityOfService)] = []
        filters.reserveCapacity(subscribe.subscriptions.count)
        for subscription in subscribe.subscriptions {
            guard let filter = try? TopicFilter(subscription.filter) else {
                return .close(.protocolViolation("invalid topic filter '\(subscription.filter)'"))
            }
            guard SubscriptionTrie.admits(subscription.filter) else {
                return .close(Self.tooManyLevels("topic filter"))
            }
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
        return .subscribe(SubscribeRequest(packetID: subscribe.packetID, filters: filters, permitted: permitted))
    }

    /// Subscribes what the request may with the broker's state locked, queues the SUBACK, then the
    /// retained messages the subscriptions match; returns a reason to close and the QoS granted to
    /// each filter (`nil`: refused).
    private func subscribe(
        _ request: SubscribeRequest,
        session: SessionID,
        state: ReaderState,
        outbox: Outbox,
        core: inout MQTTBroker.Core
    ) -> (reason: CloseReason?, granted: [QualityOfService?]) {
        // Its own outputs array, not `withOutputs`: the SUBACK goes through the reader's direct
        // writes before the retained messages the subscriptions send are dispatched to them.
        var outputs: [BrokerSessions.Output] = []
        let filters = request.filters
        let requested = request.permitted.map { zip(filters, $0).filter { $1 }.map(\.0) } ?? filters
        let subscribed = core.sessions.subscribe(session, to: requested, into: &outputs)
        var next = subscribed.makeIterator()
        let granted = filters.indices.map { (request.permitted?[$0] ?? true) ? next.next() ?? nil : nil }
        let suback = MQTTSubAckPacket(
            packetID: request.packetID,
            returnCodes: granted.map { $0.map { .granted(MQTTQoS($0)) } ?? .failure }
        )
        let reason = Self.reply(.suback(suback), on: outbox, state: state)
        core.dispatch(outputs, directWrites: &state.directWrites)
        return (reason, granted)
    }

    /// Logs the filters refused for the client's limit, and reports the subscriptions made.
    private func report(_ request: SubscribeRequest, granted: [QualityOfService?], closing: Bool, state: ReaderState) {
        let permittedCount = request.permitted?.count(where: { $0 }) ?? request.filters.count
        let acceptedCount = granted.count(where: { $0 != nil })
        if acceptedCount < permittedCount {
            self.broker.logger.notice(
                "subscriptions refused: the client reached its limit",
                metadata: [
                    "client": state.clientID ?? "",
                    "refused": "\(permittedCount - acceptedCount)",
                    "limit": "\(self.broker.configuration.maximumSubscriptionsPerClient)",
                ]
            )
        }
        if !closing, acceptedCount > 0 {
            self.broker.emit(
                .subscribed(
                    clientID: state.clientID ?? "",
                    filters: zip(request.filters, granted).compactMap { $1 == nil ? nil : $0.filter.rawValue }
                )
            )
        }
    }
}
