import CoatyCommunication
import CoatyCore
import CoatyModel

/// Turns Coaty messages into one readable line each: time, event, source agent, object type and name,
/// correlation; and, with `$SYS` topics shown, broker statistics as `topic = value`. Pure apart from
/// what it learns from the messages it formats: agent names from identities, and column widths.
///
/// The event and agent columns are as wide as the widest value seen so far (at least 28 and 24
/// characters), so the columns stay aligned; a wider value widens its column from its line on.
struct MonitorFormatter {
    /// Agent names learnt from Identity objects, by identity id.
    private(set) var agentNames: [String: String] = [:]
    /// The widths of the event and agent columns.
    private(set) var columnWidths = [28, 24]
    var showPayload = false
    /// Whether to colour the lines with ANSI escape sequences (``MonitorStyle/usesColour(isTerminal:environment:)``).
    var usesColour = false

    /// Formats one message; returns nil for messages that are neither Coaty events nor `$SYS` topics.
    mutating func line(topic: String, payload: [UInt8], time: String) -> String? {
        if topic.hasPrefix("$SYS/") {
            let value = String(decoding: payload, as: UTF8.self)
            return "\(self.paint(time, .dim))  \(self.paint(topic, .yellow)) = \(value)"
        }
        guard let parsed = CoatyTopic(parsing: topic) else { return nil }
        let json = try? AnyCodable(json: payload)
        self.learnNames(from: json)
        let event = self.padded(parsed.eventLevel, column: 0)
        let agent = self.padded(self.agent(parsed.sourceID.rawValue), column: 1)
        var columns = [
            self.paint(time, .dim), self.paint(event, MonitorStyle.colour(of: parsed.code)), agent,
        ]
        let summary = Self.summary(code: parsed.code, json: json, payload: payload)
        columns.append(parsed.code == .return && json?["error"] != nil ? self.paint(summary, .red) : summary)
        if let correlation = parsed.correlationID {
            columns.append(self.paint("corr " + String(correlation.rawValue.prefix(8)), .dim))
        }
        if parsed.namespace != CoatyTopic.defaultNamespace {
            columns.append("ns " + parsed.namespace)
        }
        var line = columns.joined(separator: "  ")
        if self.showPayload {
            line += "\n    " + String(decoding: payload, as: UTF8.self)
        }
        return line
    }

    /// `text` padded to its column's width, which grows to fit it.
    private mutating func padded(_ text: String, column: Int) -> String {
        self.columnWidths[column] = max(self.columnWidths[column], text.count)
        return text + String(repeating: " ", count: self.columnWidths[column] - text.count)
    }

    private func paint(_ text: String, _ colour: MonitorStyle.Colour?) -> String {
        guard self.usesColour, let colour else { return text }
        return colour.apply(to: text)
    }

    /// "AgentB (22222222)" when the agent's identity was seen, else the id's first 8 characters.
    func agent(_ id: String) -> String {
        let short = String(id.prefix(8))
        if let name = self.agentNames[id] { return "\(name) (\(short))" }
        return short
    }

    /// The name learnt for the agent with identity `id`, if any.
    func agentName(_ id: String) -> String? { self.agentNames[id] }

    mutating func learnNames(from json: AnyCodable?) {
        guard let json else { return }
        var objects: [AnyCodable] = []
        if let object = json["object"] { objects.append(object) }
        objects += json["objects"]?.arrayValue ?? []
        objects += json["relatedObjects"]?.arrayValue ?? []
        for object in objects where object["coreType"]?.stringValue == CoreType.identity.rawValue {
            if let id = object["objectId"]?.stringValue, let name = object["name"]?.stringValue {
                self.agentNames[id] = name
            }
        }
    }

    /// What the event carries, in a few words.
    static func summary(code: EventCode, json: AnyCodable?, payload: [UInt8]) -> String {
        guard let json else {
            return code == .ioValue ? "\(payload.count) bytes" : "(not JSON, \(payload.count) bytes)"
        }
        if let object = json["object"] { return Self.describe(object) }
        if let objects = json["objects"]?.arrayValue {
            let names = objects.prefix(3).map(Self.describe).joined(separator: ", ")
            return "\(objects.count) object(s)" + (objects.isEmpty ? "" : ": " + names)
                + (objects.count > 3 ? ", …" : "")
        }
        if let ids = json["objectIds"]?.arrayValue {
            return "objectIds " + ids.compactMap { $0.stringValue.map { String($0.prefix(8)) } }.joined(separator: ", ")
        }
        switch code {
        case .discover, .query:
            var parts: [String] = []
            for key in ["objectId", "externalId"] {
                if let value = json[key]?.stringValue { parts.append("\(key) \(value.prefix(8))") }
            }
            for key in ["coreTypes", "objectTypes"] {
                if let values = json[key]?.arrayValue {
                    parts.append("\(key) [\(values.compactMap(\.stringValue).joined(separator: ", "))]")
                }
            }
            return parts.joined(separator: " ")
        case .call:
            return "parameters " + (json["parameters"]?.jsonString ?? "none")
                + (json["filter"] != nil ? " (with context filter)" : "")
        case .return:
            if let error = json["error"] {
                return "error \(error["code"]?.jsonString ?? "?") \(error["message"]?.stringValue ?? "")"
            }
            return "result " + (json["result"]?.jsonString ?? "?")
        case .associate:
            let source = json["ioSourceId"]?.stringValue.map { String($0.prefix(8)) } ?? "?"
            let actor = json["ioActorId"]?.stringValue.map { String($0.prefix(8)) } ?? "?"
            if let route = json["associatingRoute"]?.stringValue { return "\(source) → \(actor) via \(route)" }
            return "\(source) ↛ \(actor) (disassociate)"
        default:
            return json.jsonString
        }
    }

    /// `objectType "name"`.
    static func describe(_ object: AnyCodable) -> String {
        let type = object["objectType"]?.stringValue ?? "?"
        let name = object["name"]?.stringValue ?? ""
        return "\(type) \"\(name)\""
    }
}
