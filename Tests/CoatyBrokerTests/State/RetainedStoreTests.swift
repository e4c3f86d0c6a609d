import CoatyCore
import Testing

@testable import CoatyBroker

struct RetainedStoreTests {
    @Test func storesReplacesAndDeletes() throws {
        var store = RetainedStore()
        store.apply(BrokerMessage(topic: "a/b", payload: [1], qos: .atLeastOnce, retain: true))
        store.apply(BrokerMessage(topic: "a/b", payload: [2], qos: .atMostOnce, retain: true))
        #expect(store.message(topic: Array("a/b".utf8))?.payload == [2])
        #expect(store.message(topic: Array("a/b".utf8))?.qos == .atMostOnce)
        store.apply(BrokerMessage(topic: "a/b", payload: [], qos: .atMostOnce, retain: true))
        #expect(store.count == 0)
        // A zero-byte retained message is never stored [MQTT-3.3.1-11].
        store.apply(BrokerMessage(topic: "x", payload: [], qos: .atMostOnce, retain: true))
        #expect(store.count == 0)
    }

    @Test func lookupsFollowWildcardAndDollarRules() throws {
        var store = RetainedStore()
        for topic in ["a/b", "a/c", "$SYS/x", "b"] {
            store.apply(BrokerMessage(topic: topic, payload: [1], qos: .atMostOnce, retain: true))
        }
        #expect(store.messages(matching: try TopicFilter("a/+")).map(\.topicString) == ["a/b", "a/c"])
        #expect(store.messages(matching: try TopicFilter("#")).map(\.topicString) == ["a/b", "a/c", "b"])
        #expect(store.messages(matching: try TopicFilter("$SYS/#")).map(\.topicString) == ["$SYS/x"])
        #expect(store.messages(matching: try TopicFilter("b")).map(\.retain) == [true])
    }

    @Test func refusesNewTopicsBeyondTheBound() {
        var store = RetainedStore(maximumCount: 2)
        for topic in ["a", "b", "c"] {
            store.apply(BrokerMessage(topic: topic, payload: [1], qos: .atMostOnce, retain: true))
        }
        #expect(store.count == 2)
        #expect(store.refusedCount == 1)
        store.apply(BrokerMessage(topic: "a", payload: [9], qos: .atMostOnce, retain: true))
        #expect(store.message(topic: Array("a".utf8))?.payload == [9])
    }
}
