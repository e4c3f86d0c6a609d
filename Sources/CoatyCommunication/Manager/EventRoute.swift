package import CoatyCore

/// Which inbound events an observation or a handler receives: the topic filter to subscribe and the
/// selection of the decoded events on it.
package struct EventRoute<Event: Sendable>: Sendable {
    package let filter: TopicFilter
    package let select: @Sendable (Delivery) -> Event?
}
