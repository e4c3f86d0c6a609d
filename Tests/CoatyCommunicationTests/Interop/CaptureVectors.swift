import CoatyModel
import Foundation

/// The messages three coaty-js 2.4.1 agents exchanged through mosquitto (`Tests/Fixtures/coaty-js`).
struct CapturedMessage: Sendable, CustomStringConvertible {
    let line: Int
    let topic: String
    let payload: [UInt8]
    let isJSON: Bool
    let event: String?
    let sourceID: ObjectID?
    let correlationID: ObjectID?
    let retain: Bool

    var description: String { "line \(self.line) \(self.event ?? self.topic)" }
}

/// A CONNECT record: the client id and last will an agent connected with.
struct CapturedConnect: Sendable, CustomStringConvertible {
    let agentID: ObjectID
    let clientID: String
    let willTopic: String
    let willPayload: String?

    var description: String { self.clientID }
}

enum CaptureVectors {
    static let url: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("Tests/Fixtures/coaty-js/coaty-js-capture.jsonl")
    }()

    static let records: [(line: Int, json: AnyCodable)] = {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").enumerated().compactMap { index, line in
            (try? AnyCodable(json: String(line))).map { (index + 1, $0) }
        }
    }()

    static let messages: [CapturedMessage] = records.compactMap { record in
        message(line: record.line, json: record.json)
    }

    static func message(line: Int, json: AnyCodable) -> CapturedMessage? {
        guard let topic = json["topic"]?.stringValue else { return nil }
        var payload: [UInt8] = Array((json["payload"]?.stringValue ?? "").utf8)
        if let hex = json["payloadHex"]?.stringValue {
            let digits = Array(hex.utf8)
            payload = stride(from: 0, to: digits.count - 1, by: 2).compactMap { offset in
                UInt8(String(decoding: digits[offset...offset + 1], as: UTF8.self), radix: 16)
            }
        }
        let sourceID: ObjectID? = json["sourceId"]?.stringValue.map { ObjectID($0) }
        let correlationID: ObjectID? = json["correlationId"]?.stringValue.map { ObjectID($0) }
        return CapturedMessage(
            line: line,
            topic: topic,
            payload: payload,
            isJSON: json["payloadIsJson"]?.boolValue ?? false,
            event: json["event"]?.stringValue,
            sourceID: sourceID,
            correlationID: correlationID,
            retain: json["publishedWithRetain"]?.boolValue ?? false
        )
    }

    /// Messages on Coaty topics.
    static let coatyMessages = messages.filter { $0.topic.hasPrefix("coaty/") }

    /// Messages on other topics (Raw events and external IO routes).
    static let otherMessages = messages.filter { !$0.topic.hasPrefix("coaty/") }

    static let connects: [CapturedConnect] = records.compactMap { _, json in
        guard json["type"] == "connect", let clientID = json["clientId"]?.stringValue,
            let agent = json["agent"]?.stringValue?.split(separator: " "), agent.count >= 2,
            let will = json["will"], let willTopic = will["topic"]?.stringValue
        else { return nil }
        return CapturedConnect(
            agentID: ObjectID(String(agent[1])),
            clientID: clientID,
            willTopic: willTopic,
            willPayload: will["payload"]?.stringValue
        )
    }

    /// The request a response answers: the captured request with the same correlation id.
    static func request(answeredBy response: CapturedMessage) -> CapturedMessage? {
        coatyMessages.first { message in
            message.correlationID == response.correlationID
                && ["DSC", "QRY", "UPD", "CLL"].contains(where: { message.event?.hasPrefix($0) == true })
                && message.line < response.line
        }
    }
}
