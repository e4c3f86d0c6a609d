import CoatyModel
import Foundation
import Synchronization
import Testing

/// A folder holds its files strongly; each file links back to its folder weakly.
final class Folder: CoatyObject, @unchecked Sendable {
    override class var objectType: String { "com.example.Folder" }
    override class var propertyKeys: Set<String> { ["files", "favourite"] }

    let files: [File]
    let favourite: File?

    init(name: String, objectID: ObjectID = .random(), files: [File], favourite: File? = nil) {
        self.files = files
        self.favourite = favourite
        super.init(objectID: objectID, name: name)
    }

    private enum CodingKeys: String, CodingKey { case files, favourite }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.files = try container.decodeObjects([File].self, forKey: .files)
        self.favourite = try container.decodeObjectIfPresent(File.self, forKey: .favourite)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeObjects(self.files, forKey: .files)
        try container.encodeObjectIfPresent(self.favourite, forKey: .favourite)
    }
}

final class File: CoatyObject, @unchecked Sendable {
    override class var objectType: String { "com.example.File" }
    override class var propertyKeys: Set<String> { ["folder"] }

    let folder: ObjectLink<Folder>

    init(name: String, folderID: ObjectID) {
        self.folder = ObjectLink(objectID: folderID)
        super.init(name: name)
    }

    private enum CodingKeys: String, CodingKey { case folder }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.folder = try container.decode(ObjectLink<Folder>.self, forKey: .folder)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.folder, forKey: .folder)
    }
}

/// A node whose strong successor can be set after creation: the only way to build a strong cycle.
final class Chain: CoatyObject, @unchecked Sendable {
    override class var objectType: String { "com.example.Chain" }
    override class var propertyKeys: Set<String> { ["next"] }

    let next = Mutex<Chain?>(nil)

    init(name: String) { super.init(name: name) }

    private enum CodingKeys: String, CodingKey { case next }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let next = try container.decodeObjectIfPresent(Chain.self, forKey: .next)
        try super.init(from: decoder)
        self.next.withLock { $0 = next }
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeObjectIfPresent(self.next.withLock { $0 }, forKey: .next)
    }
}

struct ObjectGraphTests {
    let family: ObjectFamily = [Folder.self, File.self, Chain.self]

    func makeFolder() -> Folder {
        let folderID = ObjectID.random()
        let a = File(name: "a.txt", folderID: folderID)
        let b = File(name: "b.txt", folderID: folderID)
        let folder = Folder(name: "docs", objectID: folderID, files: [a, b], favourite: a)
        a.folder.resolve(to: folder)
        b.folder.resolve(to: folder)
        return folder
    }

    @Test func cyclesThroughWeakLinksAndSharedObjectsRoundTrip() throws {
        let folder = self.makeFolder()
        let data = try ObjectGraphEncoder().encode(folder)
        let document = try AnyCodable(json: data)
        #expect(document["objects"]?.arrayValue?.count == 3)  // the shared file is written once
        #expect(document["objects"]?[0]?["files"] == [["$ref": 1], ["$ref": 2]])
        #expect(document["objects"]?[1]?["folder"] == ["$ref": 0, "objectId": .string(folder.objectID.rawValue)])

        let graph = try ObjectGraphDecoder(family: self.family).decode(from: data)
        let decoded = try #require(graph.root as? Folder)
        #expect(decoded.files.map(\.name) == ["a.txt", "b.txt"])
        #expect(decoded.favourite === decoded.files[0])
        #expect(decoded.files[0].folder.object === decoded)
        #expect(decoded.files[1].folder.object === decoded)
        #expect(graph.objects.count == 3)
    }

    @Test func wireEncodingOfALinkIsTheObjectID() throws {
        let folder = self.makeFolder()
        let json = try AnyCodable(json: CoatyJSONEncoder().encode(folder.files[0]))
        #expect(json["folder"] == .string(folder.objectID.rawValue))
        let decoded = try ObjectFamily([File.self]).decode(File.self, from: CoatyJSONEncoder().encode(folder.files[0]))
        #expect(decoded.folder.object == nil)
        let map = ObjectIdentityMap()
        map.insert(folder)
        #expect(decoded.folder.resolve(in: map) === folder)
    }

    @Test func strongCycleIsAnErrorAtEncodeTime() throws {
        let first = Chain(name: "1")
        let second = Chain(name: "2")
        first.next.withLock { $0 = second }
        second.next.withLock { $0 = first }
        defer { second.next.withLock { $0 = nil } }
        #expect {
            try ObjectGraphEncoder().encode(first)
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.debugDescription.contains("strong reference cycle")
        }
    }

    @Test func deadLinkTargetIsAnErrorAtEncodeTime() throws {
        let file = File(name: "orphan", folderID: .random())
        #expect(throws: EncodingError.self) { try ObjectGraphEncoder().encode(file) }
    }

    static let folderEntry =
        #"{"objectId":"f","name":"f","objectType":"com.example.Folder","coreType":"CoatyObject","files":[{"$ref":1}]}"#
    static let fileEntry =
        #"{"objectId":"a","name":"a","objectType":"com.example.File","coreType":"CoatyObject","folder":{"$ref":0,"objectId":"f"}}"#

    static let malformed: [(String, String)] = [
        ("not a graph", #"{"objects":[]}"#),
        ("empty table", #"{"coatyObjectGraph":1,"objects":[]}"#),
        (
            "out-of-range reference",
            #"{"coatyObjectGraph":1,"objects":[\#(folderEntry.replacingOccurrences(of: "\"$ref\":1", with: "\"$ref\":7"))]}"#
        ),
        (
            "negative reference",
            #"{"coatyObjectGraph":1,"objects":[\#(folderEntry.replacingOccurrences(of: "\"$ref\":1", with: "\"$ref\":-1")),\#(fileEntry)]}"#
        ),
        (
            "reference that is not a number",
            #"{"coatyObjectGraph":1,"objects":[\#(folderEntry.replacingOccurrences(of: "\"$ref\":1", with: "\"$ref\":\"1\"")),\#(fileEntry)]}"#
        ),
        (
            "strong self reference",
            #"{"coatyObjectGraph":1,"objects":[\#(folderEntry.replacingOccurrences(of: "\"$ref\":1", with: "\"$ref\":0")),\#(fileEntry)]}"#
        ),
        (
            "strong reference of the wrong type",
            #"{"coatyObjectGraph":1,"objects":[\#(folderEntry),\#(folderEntry.replacingOccurrences(of: "[{\"$ref\":1}]", with: "[]"))]}"#
        ),
        (
            "link of the wrong type",
            #"{"coatyObjectGraph":1,"objects":[\#(folderEntry),\#(fileEntry.replacingOccurrences(of: "\"$ref\":0,\"objectId\":\"f\"", with: "\"$ref\":1,\"objectId\":\"a\""))]}"#
        ),
        (
            "dangling link id",
            #"{"coatyObjectGraph":1,"objects":[\#(folderEntry),\#(fileEntry.replacingOccurrences(of: "\"objectId\":\"f\"}", with: "\"objectId\":\"zz\"}"))]}"#
        ),
        (
            "inline object instead of a reference",
            #"{"coatyObjectGraph":1,"objects":[\#(folderEntry.replacingOccurrences(of: "{\"$ref\":1}", with: fileEntry))]}"#
        ),
        (
            "strong cycle in the input",
            #"{"coatyObjectGraph":1,"objects":[{"objectId":"1","name":"1","objectType":"com.example.Chain","coreType":"CoatyObject","next":{"$ref":1}},{"objectId":"2","name":"2","objectType":"com.example.Chain","coreType":"CoatyObject","next":{"$ref":0}}]}"#
        ),
        ("truncated JSON", #"{"coatyObjectGraph":1,"objects":[{"objectId":"#),
    ]

    @Test(arguments: Self.malformed)
    func malformedInputIsAnError(_ name: String, _ json: String) throws {
        #expect(throws: DecodingError.self, "\(name)") {
            try ObjectGraphDecoder(family: self.family).decode(from: bytes(json))
        }
    }

    @Test func deepStrongReferenceChainsAreAnError() throws {
        let count = 2_000
        var entries: [String] = []
        for index in 0..<count {
            let next = index + 1 < count ? #","next":{"$ref":\#(index + 1)}"# : ""
            entries.append(
                #"{"objectId":"\#(index)","name":"n","objectType":"com.example.Chain","coreType":"CoatyObject"\#(next)}"#
            )
        }
        let json = #"{"coatyObjectGraph":1,"objects":[\#(entries.joined(separator: ","))]}"#
        #expect(throws: DecodingError.self) { try ObjectGraphDecoder(family: self.family).decode(from: bytes(json)) }
        #expect(throws: DecodingError.self) {
            try ObjectGraphDecoder(family: self.family).decode(from: bytes(String(repeating: "[", count: 100_000)))
        }
        // A caller cannot raise the limit past what the stack takes: 50,000 overflowed it.
        #expect(throws: DecodingError.self) {
            try ObjectGraphDecoder(family: self.family, maximumDepth: 50_000).decode(from: bytes(json))
        }
    }
}
