import CoatyCore

/// A control command for the connection, performed by the send loop in order.
enum ControlCommand: Sendable, Equatable {
    /// Subscribe a filter, then resume the waiter (the observation that queued it), if any.
    case subscribe(TopicFilter, WaiterToken?)
    case unsubscribe(TopicFilter)

    var isSubscribe: Bool {
        if case .subscribe = self { return true }
        return false
    }

    var filter: TopicFilter {
        switch self {
        case .subscribe(let filter, _), .unsubscribe(let filter): filter
        }
    }

    /// The observation waiting for this command, if any.
    var waiter: WaiterToken? {
        if case .subscribe(_, let waiter) = self { return waiter }
        return nil
    }
}

/// The control commands waiting for the send loop, in order.
///
/// Knows whether a subscription is among them without scanning: every request asks, and up to 15
/// deferred unsubscriptions are usually waiting (see ``ManagerStateMachine/deferredUnsubscribeBatch``).
struct ControlQueue: Sendable, Equatable {
    private(set) var commands: [ControlCommand] = []
    private(set) var hasSubscribe = false

    var count: Int { self.commands.count }

    var isEmpty: Bool { self.commands.isEmpty }

    mutating func append(_ command: ControlCommand) {
        if command.isSubscribe { self.hasSubscribe = true }
        self.commands.append(command)
    }

    /// Removes and returns every command.
    mutating func takeAll() -> [ControlCommand] {
        defer { self = ControlQueue() }
        return self.commands
    }
}
