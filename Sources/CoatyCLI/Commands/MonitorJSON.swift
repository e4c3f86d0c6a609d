import CoatyCommunication
import CoatyModel

/// `coaty monitor --json`: one JSON object per message, on one line, for scripts.
///
/// A Coaty event gives `time`, `topic`, `namespace`, `event` (the event code, `ADV`), `filter` (the
/// core type, `:object type`, operation or IO context of the topic, when it has one), `sourceId`,
/// `agent` (its name, once its identity was seen), `correlationId` (two-way events), `objectType` and
/// `objectIds` (of the objects the payload carries) and `payload` (the payload as a JSON value; a
/// string when it is not JSON). A `$SYS` topic gives `time`, `topic` and `value` (the payload text).
enum MonitorJSON {
    /// The line for one message, or nil for a message that is neither a Coaty event nor a `$SYS` topic.
    ///
    /// - Parameters:
    ///   - time: The time it arrived, ISO 8601.
    ///   - agentName: The name learnt for an identity id, if any.
    static func line(
        topic: String,
        payload: [UInt8],
        time: String,
        agentName: (String) -> String? = { _ in nil }
    ) -> String? {
        Self.object(topic: topic, payload: payload, time: time, agentName: agentName)?.jsonString
    }

    /// The object for one message (see ``line(topic:payload:time:agentName:)``).
    static func object(
        topic: String,
        payload: [UInt8],
        time: String,
        agentName: (String) -> String?
    ) -> AnyCodable? {
        if topic.hasPrefix("$SYS/") {
            return .object(
                [
                    "time": .string(time), "topic": .string(topic),
                    "value": .string(String(decoding: payload, as: UTF8.self)),
                ]
            )
        }
        guard let parsed = CoatyTopic(parsing: topic) else { return nil }
        let json = try? AnyCodable(json: payload)
        var members: [String: AnyCodable] = [
            "time": .string(time), "topic": .string(topic), "namespace": .string(parsed.namespace),
            "event": .string(parsed.code.rawValue), "sourceId": .string(parsed.sourceID.rawValue),
            "payload": json ?? .string(String(decoding: payload, as: UTF8.self)),
        ]
        if let filter = parsed.filter { members["filter"] = .string(filter) }
        if let correlation = parsed.correlationID { members["correlationId"] = .string(correlation.rawValue) }
        if let name = agentName(parsed.sourceID.rawValue) { members["agent"] = .string(name) }
        let objects = json.map(Self.objects(in:)) ?? []
        if let type = objects.first?["objectType"]?.stringValue { members["objectType"] = .string(type) }
        let ids =
            objects.compactMap { $0["objectId"]?.stringValue }
            + (json?["objectIds"]?.arrayValue ?? []).compactMap(\.stringValue)
        if !ids.isEmpty { members["objectIds"] = .array(ids.map(AnyCodable.string)) }
        return .object(members)
    }

    /// The objects an event's payload carries (`object`, then `objects`).
    private static func objects(in json: AnyCodable) -> [AnyCodable] {
        (json["object"].map { [$0] } ?? []) + (json["objects"]?.arrayValue ?? [])
    }
}
