// Shared by the harnesses in this folder: Scripts/fuzz.sh compiles Fuzz/<area>/Support/*.swift with
// every harness of the area.

/// A reference of MQTT 3.1.1 §4.7, written for clarity, not speed: the levels of a topic name or
/// filter, split on every '/'.
func referenceLevels(_ bytes: [UInt8]) -> [[UInt8]] {
    bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map(Array.init)
}

/// '+' matches one level, '#' the parent level and any number below it; a filter starting with a
/// wildcard does not match a topic starting with '$' [MQTT-4.7.2-1].
func referenceMatches(filter: [UInt8], topic: [UInt8]) -> Bool {
    let filterLevels = referenceLevels(filter)
    let topicLevels = referenceLevels(topic)
    if topic.first == UInt8(ascii: "$"),
        filterLevels[0] == [UInt8(ascii: "+")] || filterLevels[0] == [UInt8(ascii: "#")]
    {
        return false
    }
    for (index, level) in filterLevels.enumerated() {
        if level == [UInt8(ascii: "#")] { return true }
        guard index < topicLevels.count else { return false }
        if level != [UInt8(ascii: "+")], level != topicLevels[index] { return false }
    }
    return filterLevels.count == topicLevels.count
}
