import CoatyCore

/// Which topics each client may publish to and receive from, read from a mosquitto ACL file.
///
/// The rules and their order of evaluation are mosquitto's (`acl_file`), so operators can reuse
/// their files:
///
/// ```
/// # Anonymous clients (the lines before the first `user`): read the public status only.
/// topic read status/#
///
/// user alice
/// topic readwrite sensors/#
/// topic deny sensors/secret/#
///
/// # Everyone: each client has its own subtree.
/// pattern readwrite clients/%c/#
/// pattern read users/%u/inbox
/// ```
///
/// - `user <name>` starts the rules of that user; `topic` lines before the first `user` apply to
///   clients that connected without a user name.
/// - `topic [read|write|readwrite|deny] <filter>` grants (default `readwrite`) or denies access to the
///   topics the filter matches, for the current user (or anonymous clients).
/// - `pattern [read|write|readwrite|deny] <filter>` does the same for every client, after `%c` is
///   replaced by its client id and `%u` by its user name (a pattern with `%u` does not apply to
///   clients without one).
/// - Blank lines and lines starting with `#` are ignored.
///
/// A client's own rules (its user's, or the anonymous ones) are checked first, then the patterns.
/// In each group, a matching `deny` refuses, else a matching rule that grants the access asked for
/// allows; if neither group decides, access is denied. A client whose user name or client id
/// contains `+` or `#` gets nothing from patterns, as mosquitto guards against wildcard injection.
/// An empty list therefore denies everything.
///
/// The user name is the one the client sent; it is only authenticated when the broker has a
/// password file or credentials.
///
/// Reading a topic is checked for every message delivered (retained ones too); publishing, for
/// every PUBLISH and for the will. ``canSubscribe(filter:clientID:username:)`` refuses a filter
/// through which the client could never read a message.
public struct AccessControlList: Sendable {
    /// The access a rule grants, or `deny`.
    enum Access: Sendable, Hashable {
        case read, write, readWrite, deny

        func grants(_ operation: Operation) -> Bool {
            switch self {
            case .readWrite: true
            case .read: operation == .read
            case .write: operation == .write
            case .deny: false
            }
        }
    }

    /// What a client wants to do with a topic.
    enum Operation: Sendable, Hashable { case read, write }

    /// One `topic` or `pattern` line.
    struct Rule: Sendable, Hashable {
        var access: Access
        /// The filter as written (for patterns, with `%c` and `%u`).
        var filter: String
    }

    /// The rules before the first `user` line, for clients without a user name.
    var anonymousRules: [Rule] = []
    /// The rules of each user, by user name bytes.
    var userRules: [[UInt8]: [Rule]] = [:]
    /// The `pattern` rules, for every client.
    var patterns: [Rule] = []

    /// Whether the client may receive messages published to `topic`.
    ///
    /// - Parameters:
    ///   - topic: A topic name.
    ///   - clientID: The client's id, for `%c` in patterns.
    ///   - username: The client's user name, or `nil` for an anonymous client.
    public func canRead(topic: String, clientID: String, username: String?) -> Bool {
        self.access(clientID: clientID, username: username).allows(.read, topic: TopicLevels(topic))
    }

    /// Whether the client may publish to `topic` (see ``canRead(topic:clientID:username:)``).
    public func canWrite(topic: String, clientID: String, username: String?) -> Bool {
        self.access(clientID: clientID, username: username).allows(.write, topic: TopicLevels(topic))
    }

    /// Whether the broker grants a subscription to `filter`: `false` if the client could read no
    /// topic the filter matches, because no rule lets it read any of them or a `deny` rule checked
    /// before its grants covers them all.
    ///
    /// A granted filter may still match topics the client may not read; those messages are not
    /// delivered to it.
    public func canSubscribe(filter: String, clientID: String, username: String?) -> Bool {
        self.access(clientID: clientID, username: username).allowsSubscription(to: TopicLevels(filter))
    }

    /// The rules that apply to one client, resolved once when it connects.
    func access(clientID: String, username: String?) -> ClientAccess {
        let own = username.map { self.userRules[Array($0.utf8)] ?? [] } ?? self.anonymousRules
        let isDangerous = [clientID, username ?? ""].contains { $0.contains("+") || $0.contains("#") }
        let patterns: [Rule] =
            isDangerous
            ? []
            : self.patterns.compactMap { rule in
                Self.substitute(rule.filter, clientID: clientID, username: username).map {
                    Rule(access: rule.access, filter: $0)
                }
            }
        return ClientAccess(own: own, patterns: patterns)
    }

    /// `pattern` with `%c` replaced by the client id and `%u` by the user name, or `nil` if it has
    /// `%u` and there is no user name.
    static func substitute(_ pattern: String, clientID: String, username: String?) -> String? {
        var result = ""
        var characters = pattern[...]
        while let character = characters.popFirst() {
            guard character == "%", let next = characters.first, next == "c" || next == "u" else {
                result.append(character)
                continue
            }
            characters.removeFirst()
            if next == "c" {
                result += clientID
            } else {
                guard let username else { return nil }
                result += username
            }
        }
        return result
    }
}
