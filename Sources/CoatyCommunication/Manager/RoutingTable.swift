import CoatyCore

/// Identifies one observer (one stream) in a ``RoutingTable``.
struct ObserverID: Hashable, Sendable, Comparable {
    let rawValue: UInt64
    static func < (lhs: ObserverID, rhs: ObserverID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// How an observer's filter is matched against inbound topics.
package enum RouteKind: Sendable, Hashable {
    /// Coaty events: the filter is a Coaty subscription filter.
    case coaty
    /// Raw events: any topic matching the filter, except Coaty-shaped topics other than `IOV` (§1.7).
    case raw
    /// IO values: exact topic equality with the route.
    case ioValue
}

/// The routing state of a manager: which observers exist, which topic filters they need, and which
/// filters are subscribed on the current connection. A pure value: it performs no I/O, it returns
/// what has to be done.
struct RoutingTable<Receiver: Sendable>: Sendable {
    struct Entry: Sendable {
        let id: ObserverID
        let filter: TopicFilter
        let kind: RouteKind
        let receiver: Receiver
    }

    private(set) var entries: [ObserverID: Entry] = [:]
    /// Observers per filter, in registration order.
    private(set) var observersByFilter: [TopicFilter: InlineList<ObserverID>] = [:]
    /// The observed filters that end in a literal level (a request's response filter ends in its
    /// correlation id), by that level: an inbound topic can only match those whose last level is
    /// its own, so ``receivers(of:)`` looks them up instead of matching each one. With many requests
    /// outstanding this keeps routing a message from growing with their number.
    private var filtersByLastLevel: [TopicLevel: InlineList<TopicFilter>] = [:]
    /// The observed filters that end in a wildcard, matched against every inbound topic.
    private var wildcardEndedFilters: [TopicFilter] = []
    /// Filters that are always subscribed (built-in responders), with no observer entry.
    private(set) var permanentFilters: Set<TopicFilter> = []
    /// Filters subscribed on the current connection.
    private(set) var subscribed: Set<TopicFilter> = []
    private var nextID: UInt64 = 0

    /// Whether a subscription action is needed after adding an observer.
    enum AddAction: Equatable { case subscribe(TopicFilter), none }
    /// Whether an unsubscription action is needed after removing an observer.
    enum RemoveAction: Equatable { case unsubscribe(TopicFilter), none }

    /// Allocates a fresh observer id.
    mutating func makeID() -> ObserverID {
        self.nextID += 1
        return ObserverID(rawValue: self.nextID)
    }

    /// Adds a filter that stays subscribed for the table's lifetime.
    mutating func addPermanent(_ filter: TopicFilter) {
        self.permanentFilters.insert(filter)
    }

    /// Registers an observer. Returns `.subscribe` when its filter is not subscribed yet.
    ///
    /// Every request adds and removes its response filter, so both look each key up once.
    mutating func add(_ id: ObserverID, filter: TopicFilter, kind: RouteKind, receiver: Receiver) -> AddAction {
        self.entries[id] = Entry(id: id, filter: filter, kind: kind, receiver: receiver)
        if self.observersByFilter.append(id, forKey: filter) { self.index(filter) }
        // An observed filter is needed, so only the subscription decides.
        return self.subscribed.contains(filter) ? .none : .subscribe(filter)
    }

    /// Registers one observer of `receiver` per filter. Returns their ids, in the order of `filters`,
    /// and the filters that are not subscribed yet (usually none or one, which allocates nothing).
    mutating func add(
        _ filters: [TopicFilter],
        kind: RouteKind,
        receiver: Receiver
    ) -> (ids: [ObserverID], toSubscribe: InlineList<TopicFilter>) {
        var toSubscribe = InlineList<TopicFilter>()
        let ids = filters.map { filter in
            let id = self.makeID()
            if case .subscribe(let filter) = self.add(id, filter: filter, kind: kind, receiver: receiver) {
                toSubscribe.append(filter)
            }
            return id
        }
        return (ids, toSubscribe)
    }

    /// Removes an observer. Returns `.unsubscribe` when it was the last one of a subscribed filter.
    mutating func remove(_ id: ObserverID) -> RemoveAction {
        guard let entry = self.entries.removeValue(forKey: id) else { return .none }
        let filter = entry.filter
        guard self.observersByFilter.remove(id, forKey: filter) else { return .none }
        self.unindex(filter)
        return !self.permanentFilters.contains(filter) && self.subscribed.contains(filter)
            ? .unsubscribe(filter) : .none
    }

    /// Removes every observer, returning their entries. Subscriptions are left as they are.
    mutating func removeAll() -> [Entry] {
        let all = self.entries.values.sorted { $0.id < $1.id }
        self.entries = [:]
        self.observersByFilter = [:]
        self.filtersByLastLevel = [:]
        self.wildcardEndedFilters = []
        return all
    }

    private mutating func index(_ filter: TopicFilter) {
        if let level = filter.lastLiteralLevel {
            self.filtersByLastLevel.append(filter, forKey: TopicLevel(level))
        } else {
            self.wildcardEndedFilters.append(filter)
        }
    }

    private mutating func unindex(_ filter: TopicFilter) {
        if let level = filter.lastLiteralLevel {
            self.filtersByLastLevel.remove(filter, forKey: TopicLevel(level))
        } else {
            self.wildcardEndedFilters.removeAll { $0 == filter }
        }
    }

    /// Whether some observer or a permanent subscription needs `filter`.
    func isNeeded(_ filter: TopicFilter) -> Bool {
        self.permanentFilters.contains(filter) || self.observersByFilter[filter] != nil
    }

    /// Every filter that must be subscribed, in a stable order.
    var neededFilters: [TopicFilter] {
        (Array(self.permanentFilters) + Array(self.observersByFilter.keys)).uniqued().sorted {
            $0.rawValue < $1.rawValue
        }
    }

    /// A new connection: nothing is subscribed on it yet. Returns the filters to subscribe, and marks
    /// them subscribed.
    mutating func connected() -> [TopicFilter] {
        self.subscribed = []
        return self.markNeededSubscribed()
    }

    /// Marks every needed but unsubscribed filter as subscribed and returns those filters.
    mutating func markNeededSubscribed() -> [TopicFilter] {
        let missing = self.neededFilters.filter { !self.subscribed.contains($0) }
        self.subscribed.formUnion(missing)
        return missing
    }

    /// The connection is gone: nothing is subscribed.
    mutating func disconnected() {
        self.subscribed = []
    }

    /// Marks `filter` subscribed if it is needed and not yet subscribed; returns whether the caller
    /// must subscribe it.
    mutating func claimSubscribe(_ filter: TopicFilter) -> Bool {
        guard self.isNeeded(filter) else { return false }
        return self.subscribed.insert(filter).inserted
    }

    /// Undoes ``claimSubscribe(_:)`` after the subscription failed, so it is claimed again.
    mutating func releaseSubscribeClaim(_ filter: TopicFilter) {
        self.subscribed.remove(filter)
    }

    /// Marks `filter` unsubscribed if no one needs it any more; returns whether the caller must
    /// unsubscribe it.
    mutating func claimUnsubscribe(_ filter: TopicFilter) -> Bool {
        guard !self.isNeeded(filter) else { return false }
        return self.subscribed.remove(filter) != nil
    }

    /// Undoes ``claimUnsubscribe(_:)`` when the unsubscription could not be handed over.
    mutating func returnUnsubscribeClaim(_ filter: TopicFilter) {
        self.subscribed.insert(filter)
    }

    /// The observers that receive a message on `topic`, in registration order.
    func receivers(of topic: String) -> InlineList<Entry> {
        let isCoaty = CoatyTopic.isCoatyTopic(topic)
        // Only a Raw observer needs to know, so it is found out when one matches.
        var isIOValue: Bool?
        // Most messages have one observer, which the list keeps without allocating.
        var result = InlineList<Entry>()
        func collect(_ filter: TopicFilter) {
            guard filter.matches(topic), let ids = self.observersByFilter[filter] else { return }
            ids.forEach { id in
                guard let entry = self.entries[id] else { return }
                switch entry.kind {
                case .coaty:
                    if isCoaty { result.append(entry) }
                case .raw:
                    if isIOValue == nil { isIOValue = isCoaty && Self.isIOValueTopic(topic) }
                    if !isCoaty || isIOValue == true { result.append(entry) }
                case .ioValue:
                    if filter.rawValue == topic { result.append(entry) }
                }
            }
        }
        for filter in self.wildcardEndedFilters { collect(filter) }
        if !self.filtersByLastLevel.isEmpty,
            let candidates = self.filtersByLastLevel[TopicLevel(Self.lastLevel(of: topic))]
        {
            candidates.forEach(collect)
        }
        result.sort { $0.id < $1.id }
        return result
    }

    /// A topic level as a dictionary key, hashed and compared as UTF-8 bytes, as MQTT compares topics
    /// [MQTT-4.7.3-4].
    ///
    /// A `String` or `Substring` key would be normalised to be hashed, which takes time quadratic in a
    /// run of combining marks: the last level of an inbound topic is the sender's to choose, and one of
    /// 64 KB held routing for a quarter of a second.
    struct TopicLevel: Hashable {
        var text: Substring

        init(_ text: Substring) { self.text = text }

        static func == (lhs: Self, rhs: Self) -> Bool {
            var left = lhs.text
            var right = rhs.text
            return left.withUTF8 { left in right.withUTF8 { left.elementsEqual($0) } }
        }

        func hash(into hasher: inout Hasher) {
            var text = self.text
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    /// The text after the last `/` (the whole topic if there is none).
    static func lastLevel(of topic: String) -> Substring {
        // Searches the contiguous bytes backwards: it runs for every inbound message.
        var text = topic
        let start = text.withUTF8 { bytes in
            var index = bytes.count
            while index > 0, bytes[index - 1] != UInt8(ascii: "/") { index -= 1 }
            return index
        }
        let utf8 = topic.utf8
        return topic[utf8.index(utf8.startIndex, offsetBy: start)...]
    }

    /// Whether the fourth level of a topic (the event level of a Coaty topic) is `IOV`, with or without
    /// a filter. Scans bytes: it runs for every inbound message.
    static func isIOValueTopic(_ topic: String) -> Bool {
        var utf8 = topic.utf8
        if let answer = utf8.withContiguousStorageIfAvailable(Self.isIOValueTopic(bytes:)) { return answer }
        utf8 = topic.utf8
        return Self.isIOValueTopic(bytes: Array(utf8))
    }

    private static func isIOValueTopic<Bytes: RandomAccessCollection<UInt8>>(bytes: Bytes) -> Bool
    where Bytes.Index == Int {
        var slashes = 0
        var index = bytes.startIndex
        while index < bytes.endIndex, slashes < 3 {
            if bytes[index] == UInt8(ascii: "/") { slashes += 1 }
            index += 1
        }
        guard slashes == 3 else { return false }
        let level = bytes[index...].prefix { $0 != UInt8(ascii: "/") }
        let code = level.prefix { $0 != UInt8(ascii: ":") }
        return code.elementsEqual("IOV".utf8)
    }
}

extension Array where Element: Hashable {
    func uniqued() -> [Element] {
        var seen: Set<Element> = []
        return self.filter { seen.insert($0).inserted }
    }
}
