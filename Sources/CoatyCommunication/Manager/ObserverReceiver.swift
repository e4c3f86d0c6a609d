/// The receiver of one observation in the routing table.
struct ObserverReceiver: Sendable {
    let deliver: @Sendable (Delivery) -> Void
    let finish: @Sendable () -> Void
}
