import CoatyCore
import CoatyModel
import Testing

@testable import CoatyCommunication

struct RoutingTableTests {
    typealias Table = RoutingTable<String>

    @Test func lastObserverOfAFilterUnsubscribes() throws {
        var table = Table()
        let filter = try TopicFilter("coaty/3/-/ADV:Task/+")
        _ = table.connected()
        let first = table.makeID()
        let second = table.makeID()
        #expect(table.add(first, filter: filter, kind: .coaty, receiver: "a") == .subscribe(filter))
        let result1 = table.claimSubscribe(filter)
        #expect(result1)
        #expect(table.add(second, filter: filter, kind: .coaty, receiver: "b") == .none)
        #expect(table.remove(first) == .none)
        #expect(table.remove(second) == .unsubscribe(filter))
        let result2 = table.claimUnsubscribe(filter)
        #expect(result2)
        let result3 = table.claimUnsubscribe(filter)
        #expect(!result3)
    }

    /// Filters ending in a literal level are looked up by it; the result is the same as matching every
    /// filter, for literal and wildcard endings, shared filters, and after removals.
    @Test func indexedLookupAgreesWithMatchingEveryFilter() throws {
        var table = Table()
        var filters: [TopicFilter] = []
        for index in 0..<50 {
            filters.append(try TopicFilter("coaty/3/-/RTN/+/c\(index)"))
            filters.append(try TopicFilter("coaty/3/+/RSV/+/c\(index % 7)"))
        }
        filters += try [
            "coaty/3/-/ADV:Task/+", "coaty/#", "#", "coaty/3/-/CLL:op/+/+", "raw/c1", "raw/+", "c1", "+",
            "coaty/3/-/IOV/c3",
        ].map(TopicFilter.init)
        var ids: [ObserverID] = []
        for (index, filter) in filters.enumerated() {
            for kind in [RouteKind.coaty, .raw] where index % 2 == 0 || kind == .coaty {
                let id = table.makeID()
                ids.append(id)
                _ = table.add(id, filter: filter, kind: kind, receiver: filter.rawValue)
            }
        }
        for id in ids where id.rawValue % 3 == 0 { _ = table.remove(id) }
        let topics = [
            "coaty/3/-/RTN/src/c1", "coaty/3/-/RTN/src/c49", "coaty/3/ns/RSV/src/c3", "coaty/3/-/ADV:Task/src",
            "coaty/3/-/CLL:op/src/c1", "raw/c1", "raw/c2", "c1", "c3", "coaty/3/-/IOV/c3", "coaty/3/-/RTN/src/none",
        ]
        for topic in topics {
            let isCoaty = CoatyTopic.isCoatyTopic(topic)
            let isIOValue = isCoaty && Table.isIOValueTopic(topic)
            let expected = ids.compactMap { id -> ObserverID? in
                guard let entry = table.entries[id], entry.filter.matches(topic) else { return nil }
                switch entry.kind {
                case .coaty: return isCoaty ? id : nil
                case .raw: return !isCoaty || isIOValue ? id : nil
                case .ioValue: return entry.filter.rawValue == topic ? id : nil
                }
            }
            #expect(table.receivers(of: topic).map(\.id) == expected, "\(topic)")
        }
        #expect(table.receivers(of: "coaty/3/-/RTN/src/c1").map(\.receiver).contains("coaty/3/-/RTN/+/c1"))
        _ = table.removeAll()
        #expect(table.receivers(of: "coaty/3/-/RTN/src/c1").isEmpty)
    }

    /// The index of last levels compares bytes, as MQTT does: canonically equivalent levels that differ
    /// in their bytes are different keys (a `String` key would take them as one, and would normalise
    /// the sender's level to hash it).
    @Test func lastLevelsAreKeyedByTheirBytes() throws {
        let composed = Table.TopicLevel("caf\u{E9}"[...])
        let decomposed = Table.TopicLevel("cafe\u{301}"[...])
        #expect(String(composed.text) == String(decomposed.text))  // equal as Swift strings
        #expect(composed != decomposed)
        #expect(composed == Table.TopicLevel("xcaf\u{E9}".dropFirst()))
        var table = Table()
        let filter = try TopicFilter("coaty/3/-/RTN/+/caf\u{E9}")
        _ = table.add(table.makeID(), filter: filter, kind: .coaty, receiver: "r")
        #expect(table.receivers(of: "coaty/3/-/RTN/src/caf\u{E9}").map(\.receiver) == ["r"])
        #expect(table.receivers(of: "coaty/3/-/RTN/src/cafe\u{301}").isEmpty)
    }

    @Test func staleUnsubscribeIsSkippedWhenAnObserverCameBack() throws {
        var table = Table()
        let filter = try TopicFilter("coaty/3/-/DAD/+")
        let first = table.makeID()
        _ = table.add(first, filter: filter, kind: .coaty, receiver: "a")
        _ = table.connected()
        #expect(table.remove(first) == .unsubscribe(filter))
        _ = table.add(table.makeID(), filter: filter, kind: .coaty, receiver: "b")
        // The queued unsubscribe must not remove the subscription the new observer needs.
        let result4 = table.claimUnsubscribe(filter)
        #expect(!result4)
    }

    @Test func connectSubscribesEverythingNeededIncludingPermanentFilters() throws {
        var table = Table()
        let discover = try TopicFilter("coaty/3/-/DSC/+/+")
        let channel = try TopicFilter("coaty/3/-/CHN:c/+")
        table.addPermanent(discover)
        _ = table.add(table.makeID(), filter: channel, kind: .coaty, receiver: "a")
        _ = table.add(table.makeID(), filter: channel, kind: .coaty, receiver: "b")
        let connected = table.connected()
        #expect(connected == [channel, discover])
        let result5 = table.markNeededSubscribed().isEmpty
        #expect(result5)
        table.disconnected()
        let reconnected = table.connected()
        #expect(reconnected == [channel, discover])
    }

    @Test func offlineAddDoesNotNeedAnImmediateSubscribeAfterDisconnect() throws {
        var table = Table()
        let filter = try TopicFilter("a/#")
        _ = table.connected()
        table.disconnected()
        let id = table.makeID()
        #expect(table.add(id, filter: filter, kind: .raw, receiver: "r") == .subscribe(filter))
        #expect(table.markNeededSubscribed() == [filter])
    }

    @Test(arguments: [
        (RouteKind.raw, "#", "golden/raw/1", true),
        (RouteKind.raw, "#", "coaty/3/-/CHN:c/1111", false),
        (RouteKind.raw, "#", "coaty/3/-/IOV/6666", true),
        (RouteKind.ioValue, "coaty/3/-/IOV/6666", "coaty/3/-/IOV/6666", true),
        (RouteKind.coaty, "coaty/3/+/ADV:Task/+", "coaty/3/ns/ADV:Task/1111", true),
        (RouteKind.coaty, "coaty/3/-/DSC/+/+", "coaty/3/-/DSC/1111", false),
    ])
    func receiversFollowTheRouteKind(kind: RouteKind, filter: String, topic: String, delivered: Bool) throws {
        var table = Table()
        _ = table.add(table.makeID(), filter: try TopicFilter(filter), kind: kind, receiver: "x")
        #expect(table.receivers(of: topic).isEmpty == !delivered)
    }

    @Test func receiversAreInRegistrationOrder() throws {
        var table = Table()
        let ids = (0..<3).map { _ in table.makeID() }
        _ = table.add(ids[0], filter: try TopicFilter("a/+"), kind: .raw, receiver: "first")
        _ = table.add(ids[1], filter: try TopicFilter("a/#"), kind: .raw, receiver: "second")
        _ = table.add(ids[2], filter: try TopicFilter("a/b"), kind: .raw, receiver: "third")
        #expect(table.receivers(of: "a/b").map(\.receiver) == ["first", "second", "third"])
    }

    /// Several observers of one filter, removed first-registered first: the rest keep their order and
    /// their subscription until the last one goes.
    @Test func observersOfOneFilterLeaveInAnyOrder() throws {
        var table = Table()
        let filter = try TopicFilter("coaty/3/+/RTN/+/c1")
        let ids = (0..<3).map { _ in table.makeID() }
        for (id, name) in zip(ids, ["a", "b", "c"]) { _ = table.add(id, filter: filter, kind: .coaty, receiver: name) }
        _ = table.connected()
        #expect(table.remove(ids[0]) == .none)
        #expect(table.receivers(of: "coaty/3/-/RTN/src/c1").map(\.receiver) == ["b", "c"])
        #expect(table.remove(ids[2]) == .none)
        #expect(table.receivers(of: "coaty/3/-/RTN/src/c1").map(\.receiver) == ["b"])
        #expect(table.remove(ids[1]) == .unsubscribe(filter))
        #expect(table.receivers(of: "coaty/3/-/RTN/src/c1").isEmpty)
    }
}

struct CoatyTopicTests {
    @Test(arguments: [
        "coaty/3/golden/ADV:CoatyObject/11111111-1111-4111-8111-111111111111",
        "coaty/3/golden/ADV::com.example.Thing/11111111-1111-4111-8111-111111111111",
        "coaty/3/golden/DSC/11111111-1111-4111-8111-111111111111/2efa76dd-2ad9-4425-8034-ee54d08af3b4",
        "coaty/3/golden/CLL:com.example.lights.switchLight/1111/c9",
        "coaty/3/-/DAD/1111",
        "coaty/3/golden/IOV/6666",
    ])
    func parseAndFormatRoundTrip(topic: String) throws {
        let parsed = try #require(CoatyTopic(parsing: topic))
        #expect(parsed.formatted == topic)
    }

    @Test func objectTypeFilterSplitsAtTheFirstColon() throws {
        let topic = try #require(CoatyTopic(parsing: "coaty/3/golden/ADV::com.example.Thing/1111"))
        #expect(topic.code == .advertise)
        #expect(topic.filter == ":com.example.Thing")
        #expect(topic.sourceID == "1111")
        #expect(topic.correlationID == nil)
    }

    @Test(arguments: EventCode.allCases)
    func everyEventCodeParses(code: EventCode) throws {
        let topic = CoatyTopic(
            version: 12,
            namespace: "ns",
            code: code,
            filter: code.requiresFilter ? "a:b" : nil,
            sourceID: "src",
            correlationID: code.isTwoWay ? "c1" : nil
        )
        let parsed = try #require(CoatyTopic(parsing: topic.formatted))
        #expect(parsed == topic)
        #expect(parsed.formatted == topic.formatted)
    }

    @Test func parsingIsLenientLikeCoatyJS() throws {
        let extra = try #require(CoatyTopic(parsing: "coaty/2/ns/DAD/src/extra/levels"))
        #expect(extra.version == 2)
        #expect(extra.sourceID == "src")
    }

    @Test(arguments: [
        "golden/raw/1", "coaty/3/ns/XYZ/src", "coaty/x/ns/ADV:Task/src", "coaty/3/ns/DSC/src",
        "coaty/3/ns/ADV:Task", "coaty/3/ns/adv:Task/src", "coaty/3/ns/ADVX/src",
        "coaty/3/ns/AD/src", "coaty//ns/ADV:Task/src", "coaty/3", "coaty/", "coaty",
    ])
    func unparsableTopics(topic: String) {
        #expect(CoatyTopic(parsing: topic) == nil)
    }

    /// coaty-js takes an empty source-id or correlation-id level as it is (protocol notes §1.6); so do
    /// we. A missing level still does not parse: no broker routes such a topic to a Coaty subscription.
    @Test(
        arguments: [
            ("coaty/3/ns/ADV:Task/", "", nil),
            ("coaty/3/ns/DSC/src/", "src", ""),
            ("coaty/3/ns/DSC//c1", "", "c1"),
            ("coaty/3/ns/RTN//", "", ""),
        ] as [(String, ObjectID, ObjectID?)]
    )
    func emptySourceAndCorrelationLevelsParse(topic: String, source: ObjectID, correlation: ObjectID?) throws {
        let parsed = try #require(CoatyTopic(parsing: topic))
        #expect(parsed.sourceID == source && parsed.correlationID == correlation)
        #expect(parsed.formatted == topic)
    }

    @Test(arguments: [
        ("coaty/", true), ("coaty/3/ns/ADV:Task/src", true), ("coaty", false), ("coaty3/ns", false), ("Coaty/3", false),
        ("coatx/3", false), ("coaty\\", false), ("/coaty/3", false), ("", false), ("c", false),
        ("golden/coaty/", false),
    ])
    func coatyTopicsAreRecognisedByTheirFirstLevel(topic: String, isCoaty: Bool) {
        #expect(CoatyTopic.isCoatyTopic(topic) == isCoaty)
    }

    @Test(
        arguments: [
            (EventCode.advertise, "Task", "golden", nil, "coaty/3/golden/ADV:Task/+"),
            (.advertise, ":com.example.Thing", "golden", nil, "coaty/3/golden/ADV::com.example.Thing/+"),
            (.deadvertise, nil, "golden", nil, "coaty/3/golden/DAD/+"),
            (.discover, nil, "golden", nil, "coaty/3/golden/DSC/+/+"),
            (.update, ":com.example.Thing", "golden", nil, "coaty/3/golden/UPD::com.example.Thing/+/+"),
            (.call, "com.example.add", "golden", nil, "coaty/3/golden/CLL:com.example.add/+/+"),
            (.resolve, nil, "golden", "c1", "coaty/3/golden/RSV/+/c1"),
            (.associate, "GoldenIoContext", nil, nil, "coaty/3/+/ASC:GoldenIoContext/+"),
        ] as [(EventCode, String?, String?, ObjectID?, String)]
    )
    func subscriptionFilters(
        code: EventCode,
        filter: String?,
        namespace: String?,
        correlationID: ObjectID?,
        expected: String
    ) {
        #expect(
            CoatyTopic.subscriptionFilter(code, filter: filter, namespace: namespace, correlationID: correlationID)
                .rawValue
                == expected
        )
    }

    @Test(arguments: [
        ("ok.name-1", true), ("", false), ("a/b", false), ("a+b", false), ("a#", false), ("a\u{0}", false),
    ])
    func eventFilterValidation(name: String, isValid: Bool) {
        #expect(CoatyTopic.isValidEventFilter(name) == isValid)
    }

    @Test(arguments: [
        ("coaty/3/ns/IOV/src", true), ("coaty/3/ns/IOV:ctx/src", true), ("coaty/3/ns/IOV", true),
        ("coaty/3/ns/IOVX/src", false), ("coaty/3/ns/ADV:IOV/src", false), ("coaty/3/IOV/ADV/src", false),
        ("coaty/3/ns", false), ("coaty/3/ns/", false), ("coaty/3/ns/IO/src", false),
    ])
    func ioValueTopicsAreRecognisedByTheirEventLevel(topic: String, isIOValue: Bool) {
        #expect(RoutingTable<Int>.isIOValueTopic(topic) == isIOValue)
    }
}
