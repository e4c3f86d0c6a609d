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

    /// Bytes bound the store too: a message that would not fit is refused, and the message it would
    /// have replaced is deleted rather than left to new subscribers as if it were the latest.
    @Test func refusesMessagesBeyondTheByteBoundAndDeletesWhatTheyWouldReplace() {
        var store = RetainedStore(maximumCount: 100, maximumBytes: 10)
        store.apply(BrokerMessage(topic: "a", payload: [1, 2, 3], qos: .atMostOnce, retain: true))  // 4 bytes
        store.apply(BrokerMessage(topic: "b", payload: [1, 2, 3], qos: .atMostOnce, retain: true))  // 8 bytes
        store.apply(BrokerMessage(topic: "c", payload: [1, 2, 3], qos: .atMostOnce, retain: true))  // 12: refused
        #expect(store.count == 2)
        #expect(store.byteCount == 8)
        #expect(store.refusedCount == 1)
        // Replacing within the bound frees the old bytes first.
        store.apply(BrokerMessage(topic: "a", payload: [9, 9, 9, 9, 9], qos: .atMostOnce, retain: true))
        #expect(store.message(topic: Array("a".utf8))?.payload == [9, 9, 9, 9, 9])
        #expect(store.byteCount == 10)
        // A replacement too large to fit: refused, and the older value of its topic is gone.
        store.apply(
            BrokerMessage(topic: "b", payload: [UInt8](repeating: 7, count: 20), qos: .atMostOnce, retain: true)
        )
        #expect(store.message(topic: Array("b".utf8)) == nil)
        #expect(store.byteCount == 6)
        #expect(store.refusedCount == 2)
        // Deleting frees bytes.
        store.apply(BrokerMessage(topic: "a", payload: [], qos: .atMostOnce, retain: true))
        #expect(store.count == 0)
        #expect(store.byteCount == 0)
    }
}
