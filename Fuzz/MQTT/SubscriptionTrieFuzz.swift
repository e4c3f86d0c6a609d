// fuzz-modules: CoatyCore CoatyMQTTPackets CoatySockets CoatyWebSocket CoatyTLS CoatyBroker
// fuzz-options: -max_len=1024
//
// libFuzzer harness for the broker's SubscriptionTrie, compiled into the CoatyBroker module by
// Scripts/fuzz.sh. The input is a program of operations on four sessions: subscribe, unsubscribe,
// match, and subscribe to a filter of about 200 levels (around the depth limit). Topics and filters
// are built from a few levels that collide often, including '$' levels and two byte spellings of the
// same character. Oracle, against a plain list of (session, filter) → QoS and the reference matcher
// of MQTT 3.1.1 §4.7, any disagreement traps:
// - insert and remove report correctly whether the subscription was new or existed, and count is right;
// - match(topic:) returns each matching session once with its highest granted QoS [MQTT-3.3.5-1];
// - admits(_:) accepts exactly the strings of at most 201 levels;
// - pruning keeps exactly one node per distinct level prefix of the stored filters, plus the root.
import CoatyCore

private let tokens: [[UInt8]] = ["a", "b", "", "+", "#", "$a", "$", "ab", "\u{E9}", "e\u{301}"].map { Array($0.utf8) }

extension FuzzInput {
    /// One to five levels from the token list; wildcards become "c" in topic names.
    fileprivate mutating func string(isTopic: Bool) -> [UInt8] {
        let count = Int(self.next() % 5) + 1
        var levels: [[UInt8]] = []
        for _ in 0..<count {
            let token = tokens[Int(self.next()) % tokens.count]
            levels.append(
                isTopic && (token == [UInt8(ascii: "+")] || token == [UInt8(ascii: "#")]) ? [UInt8(ascii: "c")] : token
            )
        }
        return Array(levels.joined(separator: [UInt8(ascii: "/")]))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSubscriptionTrie(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var program = FuzzInput(data, count: count)
    var trie = SubscriptionTrie()
    var reference: [SessionID: [[UInt8]: QualityOfService]] = [:]
    while !program.isAtEnd {
        let operation = program.next()
        let session = SessionID(rawValue: UInt64(operation >> 2 & 3) + 1)
        let qos = QualityOfService(rawValue: (operation >> 4) % 3) ?? .atMostOnce
        switch operation & 3 {
        case 0, 3:
            var filter = program.string(isTopic: false)
            if operation & 3 == 3 {
                // About the depth limit: 195 to 210 levels.
                let depth = 195 + Int(program.next() % 16)
                filter = Array(repeatElement(filter, count: depth).joined(separator: [UInt8(ascii: "/")]))
                let levels = referenceLevels(filter).count
                check(
                    SubscriptionTrie.admits(String(decoding: filter, as: UTF8.self)) == (levels <= 201),
                    "admits \(levels) levels"
                )
                guard levels <= 201 else { continue }
            }
            guard (try? TopicFilter(String(decoding: filter, as: UTF8.self))) != nil else { continue }
            let isNew = reference[session, default: [:]].updateValue(qos, forKey: filter) == nil
            check(trie.insert(filter: filter, session: session, qos: qos) == isNew, "insert \(filter): new \(isNew)")
        case 1:
            let filter = program.string(isTopic: false)
            let existed = reference[session]?.removeValue(forKey: filter) != nil
            check(trie.remove(filter: filter, session: session) == existed, "remove \(filter): existed \(existed)")
        default:
            let topic = program.string(isTopic: true)
            var expected: [SessionID: QualityOfService] = [:]
            for (session, filters) in reference {
                for (filter, granted) in filters where referenceMatches(filter: filter, topic: topic) {
                    expected[session] = max(expected[session] ?? granted, granted)
                }
            }
            let matched = trie.match(topic: topic)
            check(matched.dictionary == expected, "match \(topic): \(matched.dictionary) instead of \(expected)")
        }
        let total = reference.values.reduce(0) { $0 + $1.count }
        check(trie.count == total && trie.isEmpty == (total == 0), "count \(trie.count) instead of \(total)")
        var prefixes: Set<[[UInt8]]> = [[]]
        for filters in reference.values {
            for filter in filters.keys {
                let levels = referenceLevels(filter)
                for length in 1...levels.count { prefixes.insert(Array(levels.prefix(length))) }
            }
        }
        check(trie.nodeCount == prefixes.count, "\(trie.nodeCount) nodes for \(prefixes.count) level prefixes")
    }
    return 0
}
