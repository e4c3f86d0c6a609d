import CoatyModel
import Foundation
import Synchronization
import Testing

/// Locates files relative to the package root (the directory holding Package.swift).
enum Fixtures {
    static var packageRoot: URL {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url = url.deletingLastPathComponent()
        }
        return url
    }

    /// The objects inside the payloads of the captured coaty-js messages, with the event they came from.
    static func capturedObjects() throws -> [CapturedObject] {
        let url = packageRoot.appendingPathComponent("Tests/Fixtures/coaty-js/coaty-js-capture.jsonl")
        let text = try String(contentsOf: url, encoding: .utf8)
        var result: [CapturedObject] = []
        for (lineNumber, line) in text.split(separator: "\n").enumerated() {
            let record = try AnyCodable(json: String(line))
            guard let payload = record["payload"]?.stringValue, let json = try? AnyCodable(json: payload) else {
                continue
            }
            let event = record["event"]?.stringValue ?? "?"
            for key in ["object", "objects", "relatedObjects"] {
                switch json[key] {
                case .object(let members)?:
                    result.append(CapturedObject(line: lineNumber + 1, event: event, json: .object(members)))
                case .array(let elements)?:
                    for element in elements {
                        result.append(CapturedObject(line: lineNumber + 1, event: event, json: element))
                    }
                default: break
                }
            }
        }
        return result
    }
}

struct CapturedObject: CustomTestStringConvertible, Sendable {
    let line: Int
    let event: String
    let json: AnyCodable

    var testDescription: String { "line \(self.line) \(self.event) \(self.json["objectType"]?.stringValue ?? "")" }
}

/// An app-defined class used across tests.
final class Light: CoatyObject, @unchecked Sendable {
    override class var objectType: String { "com.example.Light" }
    override class var propertyKeys: Set<String> { ["isOn", "luminosity"] }

    let isOn: Bool
    let luminosity: Double

    init(name: String, isOn: Bool, luminosity: Double, objectID: ObjectID = .random()) {
        self.isOn = isOn
        self.luminosity = luminosity
        super.init(objectID: objectID, name: name)
    }

    private enum CodingKeys: String, CodingKey { case isOn, luminosity }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.isOn = try container.decode(Bool.self, forKey: .isOn)
        self.luminosity = try container.decode(Double.self, forKey: .luminosity)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.isOn, forKey: .isOn)
        try container.encode(self.luminosity, forKey: .luminosity)
    }
}

/// An event-like envelope, decoded the way the communication layer does it.
struct TestAdvertise: Codable, Sendable {
    let object: CoatyObject
    let privateData: [String: AnyCodable]?

    private enum CodingKeys: String, CodingKey { case object, privateData }

    init(object: CoatyObject, privateData: [String: AnyCodable]? = nil) {
        self.object = object
        self.privateData = privateData
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let family = decoder.userInfo[.objectFamily] as? ObjectFamily ?? ObjectFamily()
        self.object = try family.decodeObject(from: container.superDecoder(forKey: .object))
        self.privateData = try container.decodeIfPresent([String: AnyCodable].self, forKey: .privateData)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeObject(self.object, forKey: .object)
        try container.encodeIfPresent(self.privateData, forKey: .privateData)
    }
}

/// Collects skipped-element reports.
final class SkipCollector: Sendable {
    private let reports = Mutex<[ObjectDecodingOptions.SkippedObject]>([])
    var all: [ObjectDecodingOptions.SkippedObject] { self.reports.withLock { $0 } }
    func record(_ report: ObjectDecodingOptions.SkippedObject) { self.reports.withLock { $0.append(report) } }
}

/// Returns the rendered coding path of a DecodingError.
func codingPath(of error: any Error) -> [String] {
    let context: DecodingError.Context?
    switch error as? DecodingError {
    case .typeMismatch(_, let c)?, .valueNotFound(_, let c)?, .dataCorrupted(let c)?: context = c
    case .keyNotFound(let key, let c)?:
        return c.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue } + [key.stringValue]
    default: context = nil
    }
    return context?.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue } ?? []
}

func bytes(_ json: String) -> [UInt8] { Array(json.utf8) }
