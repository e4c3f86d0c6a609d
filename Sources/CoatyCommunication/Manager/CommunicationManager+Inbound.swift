import CoatyCore
import CoatyModel
import CoatyTransport
import Synchronization

/// A decoded inbound Coaty event.
enum InboundEvent: Sendable {
    case advertise(AdvertiseEvent)
    case deadvertise(DeadvertiseEvent)
    case channel(ChannelEvent)
    case discover(DiscoverEvent)
    case resolve(ResolveEvent)
    case query(QueryEvent)
    case retrieve(RetrieveEvent)
    case update(UpdateEvent)
    case complete(CompleteEvent)
    case call(CallEvent)
    case `return`(ReturnEvent)
    case associate(AssociateEvent)
}

extension CommunicationManager {
    /// Routes one inbound message: called by the transport, synchronously, in order of arrival.
    func receive(_ message: TransportMessage) {
        let (receivers, autoResolve) = self.state.withLock { state in
            (
                state.machine.routing.receivers(of: message.topic),
                state.machine.routing.permanentFilters.contains { $0.matches(message.topic) }
            )
        }
        guard !receivers.isEmpty || autoResolve else {
            self.reportUnroutable(message.topic)
            return
        }
        var coatyTopic = CoatyTopic(parsing: message.topic)
        var event: InboundEvent?
        if autoResolve || receivers.contains(where: { $0.kind == .coaty }) {
            guard let code = coatyTopic?.code else {
                self.report(.init(kind: .invalidInboundEvent, topic: message.topic, reason: "malformed Coaty topic"))
                return
            }
            // An event takes its topic over (its origin holds the topic's parts), so the delivery keeps
            // the parsed topic only when nothing was decoded (IO values, the one case that reads it).
            // Moving instead of copying saves retaining each of its strings, about ten for a Call.
            if code != .ioValue, let topic = coatyTopic.take() {
                let responseRoute = code.isTwoWay && !code.isResponse ? self.responseRoute(for: topic) : nil
                let unusableLevels = topic.unusableValues
                do {
                    event = try InboundEvent.decode(
                        message,
                        topic: consume topic,
                        family: self.configuration.objectFamily,
                        responseRoute: responseRoute
                    )
                } catch {
                    self.report(.init(kind: .invalidInboundEvent, topic: message.topic, reason: error.message))
                    return
                }
                for reason in unusableLevels + (event?.unusableValues ?? []) {
                    self.report(.init(kind: .unusableValue, topic: message.topic, reason: reason))
                }
            }
        }
        let delivery = Delivery(topic: message.topic, coatyTopic: coatyTopic, payload: message.payload, event: event)
        receivers.forEach { $0.receiver.deliver(delivery) }
        if autoResolve, case .discover(let discover)? = delivery.event { self.autoResolve(discover) }
    }

    /// Reports a message that matches no observation when its topic is not a well-formed Coaty topic
    /// (it does not parse, or has more or fewer levels than its event needs): no subscription of the
    /// manager asked for it as it stands, so a broker most likely rewrote the topic (RabbitMQ's MQTT
    /// plugin turns `.` into `/`; see Docs/Transports.md). A well-formed topic that matches nothing (a
    /// response after its request ended) stays silent.
    private func reportUnroutable(_ topic: String) {
        guard CoatyTopic.isCoatyTopic(topic) else { return }
        if let parsed = CoatyTopic(parsing: topic) {
            // `coaty/<version>/<namespace>/<event>/<source>`, and `/<correlation>` for two-way events.
            let levels = topic.utf8.reduce(1) { $1 == UInt8(ascii: "/") ? $0 + 1 : $0 }
            guard parsed.code != .ioValue, levels != (parsed.code.isTwoWay ? 6 : 5) else { return }
        }
        self.report(
            .init(
                kind: .invalidInboundEvent,
                topic: topic,
                reason: "received on a topic that is not a valid Coaty topic; does the broker rewrite topics?"
            )
        )
    }

    /// Gives a received request the way to answer it.
    func responseRoute(for topic: CoatyTopic) -> ResponseRoute? {
        guard let correlationID = topic.correlationID else { return nil }
        return ResponseRoute(correlationID: correlationID) { [weak self] code, payload throws(CommunicationError) in
            guard let self else { throw CommunicationError(.notRunning, "the communication manager is gone") }
            let responseTopic = CoatyTopic(
                namespace: self.namespace,
                code: code,
                sourceID: self.identity.objectID,
                correlationID: correlationID
            )
            self.enqueue([TransportMessage(topic: responseTopic.formatted, payload: payload)], directly: true)
        }
    }

    /// Resolves Discovers for the agent's identity and IO nodes (protocol §6.4).
    private func autoResolve(_ discover: DiscoverEvent) {
        let identity = self.identity
        let matchesIdentity =
            (discover.isDiscoveringTypes && discover.isCoreTypeCompatible(.identity))
            || (discover.isDiscoveringObjectID && discover.objectID == identity.objectID)
        if matchesIdentity { try? discover.resolve(ResolveEvent(object: identity)) }
        if discover.isDiscoveringTypes && discover.isCoreTypeCompatible(.ioNode) {
            for node in self.configuration.ioNodes { try? discover.resolve(ResolveEvent(object: node)) }
        }
    }
}

extension InboundEvent {
    /// Decodes and validates the payload of a message received on a Coaty topic.
    static func decode(
        _ message: TransportMessage,
        topic: consuming CoatyTopic,
        family: ObjectFamily,
        responseRoute: ResponseRoute? = nil
    ) throws(CommunicationError) -> InboundEvent {
        let origin = EventOrigin(
            topic: message.topic,
            sourceID: topic.sourceID,
            correlationID: topic.correlationID,
            namespace: topic.namespace
        )
        func payload<P: WirePayload>(_ type: P.Type) throws(CommunicationError) -> P {
            try EventCoding.decode(P.self, from: message.payload, family: family)
        }
        func requireFilter() throws(CommunicationError) -> String {
            guard let filter = topic.filter, CoatyTopic.isValidEventFilter(filter) || filter.hasPrefix(":") else {
                throw CommunicationError.invalid("the \(topic.code.rawValue) event has no valid filter")
            }
            return filter
        }
        switch topic.code {
        case .advertise:
            _ = try requireFilter()
            return .advertise(try AdvertiseEvent(payload: payload(AdvertiseEvent.Payload.self), origin: origin))
        case .deadvertise:
            return .deadvertise(DeadvertiseEvent(payload: try payload(DeadvertiseEvent.Payload.self), origin: origin))
        case .channel:
            let channelID = try requireFilter()
            return .channel(
                ChannelEvent(channelID: channelID, payload: try payload(ChannelEvent.Payload.self), origin: origin)
            )
        case .discover:
            var discover = try DiscoverEvent(payload: payload(DiscoverEvent.Payload.self), origin: origin)
            discover.responseRoute = responseRoute
            return .discover(discover)
        case .resolve:
            return .resolve(ResolveEvent(payload: try payload(ResolveEvent.Payload.self), origin: origin))
        case .query:
            var query = try QueryEvent(payload: payload(QueryEvent.Payload.self), origin: origin)
            query.responseRoute = responseRoute
            return .query(query)
        case .retrieve:
            return .retrieve(RetrieveEvent(payload: try payload(RetrieveEvent.Payload.self), origin: origin))
        case .update:
            _ = try requireFilter()
            var update = try UpdateEvent(payload: payload(UpdateEvent.Payload.self), origin: origin)
            update.responseRoute = responseRoute
            return .update(update)
        case .complete:
            return .complete(CompleteEvent(payload: try payload(AdvertiseEvent.Payload.self), origin: origin))
        case .call:
            let operation = try requireFilter()
            var call = CallEvent(operation: operation, payload: try payload(CallEvent.Payload.self), origin: origin)
            call.responseRoute = responseRoute
            return .call(call)
        case .return:
            return .return(ReturnEvent(payload: try payload(ReturnEvent.Payload.self), origin: origin))
        case .associate:
            let context = try requireFilter()
            return .associate(
                try AssociateEvent(
                    ioContextName: context,
                    payload: payload(AssociateEvent.Payload.self),
                    origin: origin
                )
            )
        case .ioValue:
            throw CommunicationError.invalid("IO values are not decoded as Coaty events")
        }
    }

}
