import CoatyCore
import Testing

@testable import CoatyBroker

/// `SmallDictionary` holds one entry inline and more in a `Dictionary`: both must behave alike.
struct SmallDictionaryTests {
    private func contents(_ subscribers: SmallDictionary<SessionID, QualityOfService>) -> [UInt64: QualityOfService] {
        var all: [UInt64: QualityOfService] = [:]
        for (session, qos) in subscribers { all[session.rawValue] = qos }
        #expect(all.count == subscribers.count && subscribers.keys.count == subscribers.count)
        #expect(subscribers.dictionary.count == subscribers.count)
        return all
    }

    @Test func addsReplacesAndRemovesFromOneToManyAndBack() {
        let a = SessionID(rawValue: 1)
        let b = SessionID(rawValue: 2)
        let c = SessionID(rawValue: 3)
        var subscribers = SmallDictionary<SessionID, QualityOfService>()
        #expect(subscribers.isEmpty)
        #expect(subscribers.updateValue(.atMostOnce, forKey: a) == nil)
        #expect(subscribers.updateValue(.atLeastOnce, forKey: a) == .atMostOnce)
        #expect(self.contents(subscribers) == [1: .atLeastOnce])
        #expect(subscribers.removeValue(forKey: b) == nil)
        #expect(subscribers.updateValue(.exactlyOnce, forKey: b) == nil)
        #expect(subscribers.updateValue(.atMostOnce, forKey: c) == nil)
        #expect(subscribers.updateValue(.atLeastOnce, forKey: c) == .atMostOnce)
        #expect(self.contents(subscribers) == [1: .atLeastOnce, 2: .exactlyOnce, 3: .atLeastOnce])
        #expect(subscribers.removeValue(forKey: a) == .atLeastOnce)
        #expect(subscribers.removeValue(forKey: a) == nil)
        #expect(subscribers.removeValue(forKey: c) == .atLeastOnce)
        #expect(self.contents(subscribers) == [2: .exactlyOnce])
        #expect(subscribers.updateValue(.atMostOnce, forKey: a) == nil)
        #expect(self.contents(subscribers) == [1: .atMostOnce, 2: .exactlyOnce])
        #expect(subscribers.removeValue(forKey: b) == .exactlyOnce)
        #expect(subscribers.removeValue(forKey: a) == .atMostOnce)
        #expect(subscribers.isEmpty && self.contents(subscribers).isEmpty)
    }

    @Test func subscriptAndConversionsAgreeWithADictionary() {
        var small = SmallDictionary<String, Int>()
        var reference: [String: Int] = [:]
        for (index, key) in ["a", "b", "a", "c", "b", "d"].enumerated() {
            small[key] = index
            reference[key] = index
            #expect(small.dictionary == reference && small[key] == index && small["x"] == nil)
        }
        for key in ["a", "x", "c", "b", "d"] {
            small[key] = nil
            reference[key] = nil
            #expect(small.dictionary == reference && small.count == reference.count)
        }
        #expect(SmallDictionary(["k": 1]) == SmallDictionary(["k": 1]))
        #expect(SmallDictionary(["k": 1, "l": 2]).dictionary == ["k": 1, "l": 2])
        #expect(SmallDictionary<String, Int>([:]).isEmpty)
    }
}
