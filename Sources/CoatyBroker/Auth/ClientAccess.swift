/// The access control rules of one connected client: its own (its user's or the anonymous ones)
/// and the patterns with its client id and user name filled in, resolved once at CONNECT and kept
/// with its session, so checking a delivery only compares levels.
struct ClientAccess: Sendable, Hashable {
    struct Rule: Sendable, Hashable {
        var access: AccessControlList.Access
        var filter: TopicLevels
    }

    /// The groups in the order they are checked: own rules, then patterns.
    private var groups: [[Rule]]

    init(own: [AccessControlList.Rule], patterns: [AccessControlList.Rule]) {
        self.groups = [own, patterns].map { rules in
            rules.map { Rule(access: $0.access, filter: TopicLevels($0.filter)) }
        }
    }

    /// Whether the client may read or write `topic`: in each group, a matching `deny` refuses and a
    /// matching grant allows; with no decision, access is denied.
    func allows(_ operation: AccessControlList.Operation, topic: TopicLevels) -> Bool {
        for group in self.groups {
            let matching = group.filter { $0.filter.matches(topic: topic) }
            if matching.contains(where: { $0.access == .deny }) { return false }
            if matching.contains(where: { $0.access.grants(operation) }) { return true }
        }
        return false
    }

    /// Whether the client could read some topic that `filter` matches (see
    /// ``AccessControlList/canSubscribe(filter:clientID:username:)``).
    func allowsSubscription(to filter: TopicLevels) -> Bool {
        for group in self.groups {
            if group.contains(where: { $0.access == .deny && $0.filter.covers(filter) }) { return false }
            if group.contains(where: { $0.access.grants(.read) && $0.filter.overlaps(filter) }) { return true }
        }
        return false
    }
}
