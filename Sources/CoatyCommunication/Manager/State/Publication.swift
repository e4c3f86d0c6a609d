import CoatyCore
import CoatyTransport

/// One publication in a ``ManagerStateMachine``'s outbox: the messages of one event. It takes one
/// slot whatever their number (an Advertise or Update of a custom object type goes out on two topics),
/// so the outbox bound counts events, as its users count them.
struct Publication: Sendable, Equatable {
    /// The messages, sent in order.
    var messages: [TransportMessage]
    /// The first routing entry of the request this publication makes, or `nil` for anything else: a
    /// request whose caller gave up (its response observers are gone) is withdrawn while not yet sent.
    var request: ObserverID?

    init(_ messages: [TransportMessage], request: ObserverID? = nil) {
        self.messages = messages
        self.request = request
    }
}

/// What a ``ManagerStateMachine`` does with a publication when its outbox is full while it has a send
/// loop (online): offline, the oldest publication is always dropped (and reported) to make room.
enum FullOutboxPolicy: Sendable, Equatable {
    /// Park the publisher until the send loop takes the outbox: the async `publish`.
    case wait(WaiterToken)
    /// Refuse the publication: the synchronous `publishWithoutWaiting`.
    case refuse
    /// Queue it beyond the bound: requests and responses, which their callers already wait for.
    case exceed
}
