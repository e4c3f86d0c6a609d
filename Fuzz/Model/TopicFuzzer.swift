// libFuzzer harness: Coaty topic parsing and formatting, topic-name validation and topic-filter matching.
//
// fuzz-modules: CoatyCore CoatyModel CoatyTransport CoatyCommunication
// fuzz-options: -max_len=1024 -dict=Fuzz/Model/json.dict
//
// Run: bash Scripts/fuzz.sh TopicFuzzer [seconds]. The harness is compiled into CoatyCommunication, so it sees
// that module's internal declarations.
//
// Input: a topic name, then optionally a NUL byte and a topic filter.
//
// Oracle: nothing crashes or hangs; a topic that parses formats to a topic that parses to an equal
// value, and whose `formatted` is the same again; a valid topic name of protocol version 3 matches the
// subscription filter of its own event (`CoatyTopic.subscriptionFilter`); `TopicFilter` matching a string
// and its UTF-8 bytes agree.

import CoatyCore
import CoatyModel

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTopic(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: count)
    let topicBytes = bytes.firstIndex(of: 0).map { bytes[..<$0] } ?? bytes[...]
    let topic = String(decoding: topicBytes, as: UTF8.self)
    if let filterStart = bytes.firstIndex(of: 0).map({ $0 + 1 }),
        let filter = try? TopicFilter(String(decoding: bytes[filterStart...], as: UTF8.self))
    {
        let byString = filter.matches(topic)
        let byBytes = filter.matches(bytes: Array(topic.utf8))
        guard byString == byBytes else { fatalError("filter \(filter) matches \(topic) by string but not bytes") }
    }
    guard let parsed = CoatyTopic(parsing: topic) else { return 0 }
    let formatted = parsed.formatted
    guard let reparsed = CoatyTopic(parsing: formatted), reparsed == parsed, reparsed.formatted == formatted else {
        fatalError("topic round trip differs: \(topic) -> \(formatted)")
    }
    // Wildcards, NUL and empty levels make a name that cannot be published, so only valid names are
    // checked against the subscription filter built from their parts.
    if TopicName.isValid(formatted), parsed.version == CoatyTopic.protocolVersion, parsed.code != .ioValue,
        CoatyTopic.isValidEventFilter(parsed.namespace),
        parsed.filter.map({ CoatyTopic.isValidEventFilter($0) || $0.hasPrefix(":") }) ?? true
    {
        let subscription = CoatyTopic.subscriptionFilter(
            parsed.code,
            filter: parsed.filter,
            namespace: parsed.namespace,
            correlationID: parsed.code.isResponse ? parsed.correlationID : nil
        )
        guard subscription.matches(formatted) else {
            fatalError("\(formatted) does not match its own subscription filter \(subscription)")
        }
    }
    return 0
}
