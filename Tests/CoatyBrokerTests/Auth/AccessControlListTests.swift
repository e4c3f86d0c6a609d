import Testing

@testable import CoatyBroker

/// Parsing mosquitto ACL files and deciding access, as mosquitto's `acl_file` does.
struct AccessControlListTests {
    static let example = """
        # anonymous clients
        topic read public/#

        user alice
        topic sensors/#
        topic deny sensors/secret/#
        topic write commands/+

        user bob
        topic read sensors/+/temperature

        pattern readwrite clients/%c/#
        pattern read users/%u/inbox
        """

    private func acl(_ text: String = Self.example) throws -> AccessControlList {
        try AccessControlList(parsing: text)
    }

    @Test func anonymousRulesComeBeforeTheFirstUser() throws {
        let acl = try self.acl()
        #expect(acl.canRead(topic: "public/news", clientID: "anon", username: nil))
        #expect(!acl.canWrite(topic: "public/news", clientID: "anon", username: nil))
        #expect(!acl.canRead(topic: "sensors/a", clientID: "anon", username: nil))
        // A user's rules replace the anonymous ones.
        #expect(!acl.canRead(topic: "public/news", clientID: "a1", username: "alice"))
    }

    @Test func topicRulesDefaultToReadWrite() throws {
        let acl = try self.acl()
        #expect(acl.canRead(topic: "sensors/kitchen", clientID: "a1", username: "alice"))
        #expect(acl.canWrite(topic: "sensors/kitchen", clientID: "a1", username: "alice"))
        #expect(acl.canWrite(topic: "commands/lamp", clientID: "a1", username: "alice"))
        #expect(!acl.canRead(topic: "commands/lamp", clientID: "a1", username: "alice"))
        #expect(!acl.canWrite(topic: "commands/lamp/1", clientID: "a1", username: "alice"))
        #expect(acl.canRead(topic: "sensors/hall/temperature", clientID: "b1", username: "bob"))
        #expect(!acl.canWrite(topic: "sensors/hall/temperature", clientID: "b1", username: "bob"))
        #expect(!acl.canRead(topic: "sensors/hall/humidity", clientID: "b1", username: "bob"))
    }

    @Test func denyWinsWithinItsGroupWhereverItStands() throws {
        let acl = try self.acl()
        #expect(!acl.canRead(topic: "sensors/secret/key", clientID: "a1", username: "alice"))
        #expect(!acl.canWrite(topic: "sensors/secret", clientID: "a1", username: "alice"))
        // A deny before the grant it overrides works the same.
        let reversed = try self.acl("user alice\ntopic deny a/b\ntopic a/#")
        #expect(!reversed.canRead(topic: "a/b", clientID: "c", username: "alice"))
        #expect(reversed.canRead(topic: "a/c", clientID: "c", username: "alice"))
    }

    @Test func ownRulesAreCheckedBeforePatterns() throws {
        let acl = try self.acl("user alice\ntopic read x/#\npattern deny x/%u")
        // alice's own grant decides first; the deny pattern applies where her rules say nothing.
        #expect(acl.canRead(topic: "x/alice", clientID: "c", username: "alice"))
        #expect(!acl.canRead(topic: "x/bob", clientID: "c", username: "bob"))
        let denied = try self.acl("user alice\ntopic deny x/#\npattern readwrite x/%u")
        #expect(!denied.canRead(topic: "x/alice", clientID: "c", username: "alice"))
    }

    @Test func patternsSubstituteClientIDAndUserName() throws {
        let acl = try self.acl()
        #expect(acl.canWrite(topic: "clients/dev-1/state", clientID: "dev-1", username: nil))
        #expect(acl.canRead(topic: "clients/dev-1", clientID: "dev-1", username: "bob"))
        #expect(!acl.canRead(topic: "clients/dev-2/state", clientID: "dev-1", username: "bob"))
        #expect(acl.canRead(topic: "users/bob/inbox", clientID: "b1", username: "bob"))
        #expect(!acl.canWrite(topic: "users/bob/inbox", clientID: "b1", username: "bob"))
        #expect(!acl.canRead(topic: "users/alice/inbox", clientID: "b1", username: "bob"))
        // A pattern with %u does not apply to anonymous clients.
        #expect(!acl.canRead(topic: "users//inbox", clientID: "anon", username: nil))
        #expect(AccessControlList.substitute("a/%c/%u/%x%", clientID: "C", username: "U") == "a/C/U/%x%")
        #expect(AccessControlList.substitute("a/%u", clientID: "C", username: nil) == nil)
    }

    @Test func wildcardsInIdentitiesGetNothingFromPatterns() throws {
        let acl = try self.acl()
        #expect(!acl.canRead(topic: "clients/+/x", clientID: "+", username: nil))
        #expect(!acl.canRead(topic: "clients/a/x", clientID: "a", username: "#"))
        // Their own rules still apply.
        #expect(try self.acl("user a#\ntopic read t").canRead(topic: "t", clientID: "c", username: "a#"))
    }

    @Test func anEmptyListDeniesEverything() throws {
        let acl = try self.acl("# nothing\n")
        #expect(!acl.canRead(topic: "a", clientID: "c", username: nil))
        #expect(!acl.canWrite(topic: "a", clientID: "c", username: "u"))
        #expect(!acl.canSubscribe(filter: "#", clientID: "c", username: "u"))
    }

    @Test func dollarTopicsNeedRulesThatNameThem() throws {
        let acl = try self.acl("topic read #\ntopic read $SYS/broker/#")
        #expect(!acl.canRead(topic: "$SYS/other", clientID: "c", username: nil))
        #expect(acl.canRead(topic: "$SYS/broker/load", clientID: "c", username: nil))
        #expect(acl.canRead(topic: "a/b", clientID: "c", username: nil))
    }

    @Test(arguments: [
        ("sensors/#", true),  // alice may read most of it
        ("sensors/kitchen", true),
        ("+/kitchen", true),
        ("#", true),
        ("sensors/secret/#", false),  // all denied
        ("sensors/secret/+", false),
        ("commands/+", false),  // write-only
        ("public/#", false),  // anonymous clients' rules, not alice's
        ("clients/a1/#", true),  // her pattern
        ("clients/a2/#", false),
        ("$SYS/#", false),
    ])
    func subscriptionsAreRefusedWhenNothingCouldBeRead(filter: String, granted: Bool) throws {
        #expect(try self.acl().canSubscribe(filter: filter, clientID: "a1", username: "alice") == granted)
    }

    @Test func aDenyPatternDoesNotHideTheClientsOwnGrants() throws {
        let acl = try self.acl("user alice\ntopic read a/b\npattern deny a/#")
        #expect(acl.canSubscribe(filter: "a/#", clientID: "c", username: "alice"))
        #expect(!acl.canSubscribe(filter: "a/#", clientID: "c", username: "bob"))
    }

    @Test func parsesAsMosquittoDoes() throws {
        let acl = try self.acl("\tuser  carol \ntopic   read   a b \ntopic c/#\n  # indented comment\n")
        #expect(
            acl.userRules[Array("carol".utf8)] == [
                .init(access: .read, filter: "a b"), .init(access: .readWrite, filter: "c/#"),
            ]
        )
        #expect(acl.anonymousRules.isEmpty)
        #expect(acl.canRead(topic: "a b", clientID: "x", username: "carol"))
    }

    @Test func invalidLinesAreListedAndRefuseTheWholeFile() {
        let text = """
            user
            topic read a/#/b
            topic maybe a/b
            pattern
            group admins
            topic read ok/#
            """
        #expect {
            try AccessControlList(parsing: text)
        } throws: { error in
            guard let error = error as? BrokerError, error.code == .invalidAccessControlList else { return false }
            return ["line 1:", "line 2:", "line 3:", "line 4:", "line 5:"].allSatisfy(error.message.contains)
                && !error.message.contains("line 6")
        }
    }

    @Test func aMissingFileIsAnError() {
        #expect {
            try AccessControlList(contentsOfFile: "/nonexistent/coaty-acl")
        } throws: { ($0 as? BrokerError)?.code == .invalidAccessControlList }
    }
}

/// The relations between filters and topics that access control needs.
struct TopicLevelsTests {
    @Test(arguments: [
        ("a/#", "a", true), ("a/#", "a/b/c", true), ("a/+", "a/b", true), ("a/+", "a/b/c", false),
        ("#", "$SYS/x", false), ("+/x", "$SYS/x", false), ("$SYS/#", "$SYS/x", true), ("a//b", "a//b", true),
        ("a/b", "a/b/c", false),
    ])
    func matching(filter: String, topic: String, matches: Bool) {
        #expect(TopicLevels(filter).matches(topic: TopicLevels(topic)) == matches)
    }

    @Test(arguments: [
        ("a/#", "+/b", true), ("a/+", "a/b/c", false), ("a/+/c", "+/b/+", true), ("#", "$SYS/#", false),
        ("+/#", "a", true), ("a/b", "a/c", false), ("a/b/#", "a", false), ("a/#", "a", true),
    ])
    func overlap(first: String, second: String, overlaps: Bool) {
        #expect(TopicLevels(first).overlaps(TopicLevels(second)) == overlaps)
        #expect(TopicLevels(second).overlaps(TopicLevels(first)) == overlaps)
    }

    @Test(arguments: [
        ("a/#", "a/+/c", true), ("a/#", "a", true), ("a/+", "a/#", false), ("+/+", "a/b", true),
        ("#", "$SYS/#", false), ("#", "+/b", true), ("a/b", "a/b", true), ("a/b", "a/+", false),
        ("a/+", "a/b/c", false),
    ])
    func cover(wider: String, narrower: String, covers: Bool) {
        #expect(TopicLevels(wider).covers(TopicLevels(narrower)) == covers)
    }
}
