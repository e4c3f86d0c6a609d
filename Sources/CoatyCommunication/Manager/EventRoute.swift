import CoatyCore

/// Which inbound events an observation or a handler receives: the topic filter to subscribe and the
/// selection of the decoded events on it.
struct EventRoute<Event: Sendable>: Sendable {
    let filter: TopicFilter
    let select: @Sendable (Delivery) -> Event?
}
