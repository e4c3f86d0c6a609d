// fuzz-modules: CoatyCore
// fuzz-options: -max_len=512
//
// libFuzzer harness for TopicName and TopicFilter, compiled into the CoatyCore module by
// Scripts/fuzz.sh. Input: a flags byte, then up to three strings separated by 0xFF (a byte UTF-8 never
// uses; invalid UTF-8 decodes to U+FFFD): a filter, a topic and a second filter. Flag bit 0 pads the
// first string to 65,534–65,537 UTF-8 bytes, around the length limit, when bits 3–7 are clear (rarely, as
// such inputs run slowly). Oracle, against the plain
// reference below written from MQTT 3.1.1 §4.7 and §1.5.3, any disagreement traps:
// - TopicName.validate and TopicFilter.init accept exactly the strings the reference accepts;
// - matches(_:) and matches(bytes:) agree with the reference for every filter and topic;
// - two filters are == (and then hash alike) exactly when their UTF-8 bytes are equal, as MQTT
//   compares topics byte for byte [MQTT-4.7.3-4];
// - hasWildcards and lastLiteralLevel agree with the levels.

/// Non-empty, at most 65,535 UTF-8 bytes, no U+0000 [MQTT-4.7.3-1/2/3].
private func referenceHasValidLength(_ bytes: [UInt8]) -> Bool {
    !bytes.isEmpty && bytes.count <= 65_535 && !bytes.contains(0)
}

private func referenceIsValidName(_ bytes: [UInt8]) -> Bool {
    referenceHasValidLength(bytes) && !bytes.contains(UInt8(ascii: "+")) && !bytes.contains(UInt8(ascii: "#"))
}

/// '+' fills a whole level; '#' fills a whole level and is the last one [MQTT-4.7.1-2/3].
private func referenceIsValidFilter(_ bytes: [UInt8]) -> Bool {
    guard referenceHasValidLength(bytes) else { return false }
    let levels = referenceLevels(bytes)
    for (index, level) in levels.enumerated() {
        if level.contains(UInt8(ascii: "+")), level != [UInt8(ascii: "+")] { return false }
        if level.contains(UInt8(ascii: "#")), level != [UInt8(ascii: "#")] || index != levels.count - 1 {
            return false
        }
    }
    return true
}

/// Checks validation and the derived properties of one string; returns the filter if valid.
private func checkString(_ string: String) -> TopicFilter? {
    let bytes = Array(string.utf8)
    check(TopicName.isValid(string) == referenceIsValidName(bytes), "TopicName.validate disagrees on \(bytes)")
    let filter = try? TopicFilter(string)
    check((filter != nil) == referenceIsValidFilter(bytes), "TopicFilter.init disagrees on \(bytes)")
    guard let filter else { return nil }
    let levels = referenceLevels(bytes)
    let hasWildcards = levels.contains { $0 == [UInt8(ascii: "+")] || $0 == [UInt8(ascii: "#")] }
    check(filter.hasWildcards == hasWildcards, "hasWildcards disagrees on \(bytes)")
    let last = levels[levels.count - 1]
    let expectedLast = last == [UInt8(ascii: "+")] || last == [UInt8(ascii: "#")] ? nil : last
    check(filter.lastLiteralLevel.map { Array($0.utf8) } == expectedLast, "lastLiteralLevel disagrees on \(bytes)")
    check(filter.rawValue.utf8.elementsEqual(bytes), "rawValue changed \(bytes)")
    return filter
}

private func checkMatch(_ filter: TopicFilter, _ topic: String) {
    let filterBytes = Array(filter.rawValue.utf8)
    let topicBytes = Array(topic.utf8)
    let expected = referenceMatches(filter: filterBytes, topic: topicBytes)
    check(filter.matches(topic) == expected, "matches(\(filterBytes), \(topicBytes)) should be \(expected)")
    check(filter.matches(bytes: topicBytes) == expected, "matches(bytes:) disagrees on \(filterBytes), \(topicBytes)")
    check(
        filter.matches(bytes: topicBytes[...]) == expected,
        "matches(bytes:) on a slice disagrees on \(filterBytes), \(topicBytes)"
    )
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTopics(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let input = Array(UnsafeRawBufferPointer(start: data, count: count))
    guard let flags = input.first else { return 0 }
    var parts = input.dropFirst().split(separator: 0xFF, maxSplits: 2, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    if flags & 0xF9 == 1, !parts.isEmpty {
        // Around the length limit: 65,534 to 65,537 bytes.
        let target = 65_534 + Int(flags >> 1 & 3)
        let length = parts[0].utf8.count
        if length < target { parts[0] += String(repeating: "a", count: target - length) }
    }
    let filters = parts.map(checkString)
    if let filter = filters[0] {
        for topic in parts.dropFirst() { checkMatch(filter, topic) }
        checkMatch(filter, parts[0])
    }
    if filters.count == 3, let first = filters[0], let second = filters[2] {
        checkMatch(second, parts[1])
        let sameBytes = first.rawValue.utf8.elementsEqual(second.rawValue.utf8)
        check((first == second) == sameBytes, "== disagrees with the bytes of \(first) and \(second)")
        if first == second { check(first.hashValue == second.hashValue, "equal filters hash differently") }
    }
    return 0
}
