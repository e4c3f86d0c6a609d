/// One inbound message as handed to observers.
package struct Delivery: Sendable {
    let topic: String
    /// The parsed topic of a Coaty message that is not decoded into an event (an IO value); a
    /// decoded event carries its topic's parts in its origin.
    let coatyTopic: CoatyTopic?
    let payload: [UInt8]
    let event: InboundEvent?
}
