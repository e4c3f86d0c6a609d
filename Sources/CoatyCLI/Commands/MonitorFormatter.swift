import CoatyCommunication
import CoatyCore
import CoatyModel

/// Turns Coaty messages into one readable line each: time, event, source agent, object type and name,
/// correlation. Pure apart from the agent names it learns from identities it sees.
struct MonitorFormatter {
    /// Agent names learnt from Identity objects, by identity id.
    private(set) var agentNames: [String: String] = [:]
    var showPayload = false

    /// Formats one message; returns nil for messages that are not Coaty events.
    mutating func line(topic: String, payload: [UInt8], time: String) -> String? {
        guard let parsed = CoatyTopic(parsing: topic) else { return nil }
        let json = try? AnyCodable(json: payload)
        self.learnNames(from: json)
        var columns = [time, pad(parsed.eventLevel, 28), pad(self.agent(parsed.sourceID.rawValue), 24)]
        columns.append(Self.summary(code: parsed.code, json: json, payload: payload))
        if let correlation = parsed.correlationID {
            columns.append("corr " + String(correlation.rawValue.prefix(8)))
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

    /// "AgentB (22222222)" when the agent's identity was seen, else the id's first 8 characters.
    func agent(_ id: String) -> String {
        let short = String(id.prefix(8))
        if let name = self.agentNames[id] { return "\(name) (\(short))" }
        return short
    }

    private mutating func learnNames(from json: AnyCodable?) {
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

private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}
