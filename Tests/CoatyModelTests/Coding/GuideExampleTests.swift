import CoatyModel
import Foundation
import Synchronization
import Testing

// The examples of Docs/CustomObjectTypes.md, as written there (type names prefixed with `Guide`).

final class GuideLight: CoatyObject, @unchecked Sendable {
    override class var objectType: String { "com.example.Light" }
    override class var propertyKeys: Set<String> { ["floor", "isOn"] }
    let floor: Int
    let isOn: Bool

    init(name: String, objectID: ObjectID = .random(), floor: Int, isOn: Bool) {
        self.floor = floor
        self.isOn = isOn
        super.init(objectID: objectID, name: name)
    }
    required init(from decoder: any Decoder) throws {
        self.floor = try decoder.decodeProperty("floor")
        self.isOn = try decoder.decodeProperty("isOn")
        try super.init(from: decoder)
    }
    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        try encoder.encodeProperty(self.floor, forKey: "floor")
        try encoder.encodeProperty(self.isOn, forKey: "isOn")
    }
}

final class GuideFolder: CoatyObject, @unchecked Sendable {
    override class var objectType: String { "com.example.Folder" }
    override class var propertyKeys: Set<String> { ["files"] }
    let files: [GuideFile]
    init(name: String, objectID: ObjectID = .random(), files: [GuideFile]) {
        self.files = files
        super.init(objectID: objectID, name: name)
    }
    required init(from decoder: any Decoder) throws {
        self.files = try decoder.decodeProperty("files")
        try super.init(from: decoder)
    }
    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        try encoder.encodeProperty(self.files, forKey: "files")
    }
}

final class GuideFile: CoatyObject, @unchecked Sendable {
    override class var objectType: String { "com.example.File" }
    override class var propertyKeys: Set<String> { ["folder"] }
    let folder: ObjectLink<GuideFolder>
    init(name: String, folder: ObjectLink<GuideFolder>) {
        self.folder = folder
        super.init(name: name)
    }
    required init(from decoder: any Decoder) throws {
        self.folder = try decoder.decodeProperty("folder")
        try super.init(from: decoder)
    }
    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        try encoder.encodeProperty(self.folder, forKey: "folder")
    }
}

/// The guide's `LiveLight`, as written there.
final class GuideLiveLight: DecoderUpdatable {
    let objectID: ObjectID
    private let state: Mutex<Bool>
    var isOn: Bool { self.state.withLock { $0 } }

    init(from decoder: any Decoder) throws {
        self.objectID = try Self.decodingID(in: decoder)
        self.state = Mutex(try decoder.decodeProperty("isOn"))
    }
    func update(from decoder: any Decoder) throws {
        let isOn: Bool = try decoder.decodeProperty("isOn")
        self.state.withLock { $0 = isOn }
    }
}

struct GuideExampleTests {
    @Test func stateChangeIsANewInstanceWithTheSameID() throws {
        var hall = GuideLight(name: "Hall", floor: 7, isOn: false)
        let first = try CoatyJSONEncoder().encode(hall)
        hall = GuideLight(name: hall.name, objectID: hall.objectID, floor: hall.floor, isOn: true)
        let second = try CoatyJSONEncoder().encode(hall)
        let family: ObjectFamily = [GuideLight.self]
        var lights: [ObjectID: GuideLight] = [:]
        for message in [first, second] {
            let light = try #require(try family.decode(CoatyObject.self, from: message) as? GuideLight)
            lights[light.objectID] = light
        }
        #expect(lights.count == 1 && lights[hall.objectID]?.isOn == true)
    }

    @Test func cyclicGraphThroughALink() throws {
        let folderID = ObjectID.random()
        let file = GuideFile(name: "a.txt", folder: ObjectLink(objectID: folderID))
        let folder = GuideFolder(name: "root", objectID: folderID, files: [file])
        #expect(file.folder.resolve(to: folder))
        let json = try ObjectGraphEncoder().encode(folder)
        let graph = try ObjectGraphDecoder(family: [GuideFolder.self, GuideFile.self]).decode(from: json)
        let root = try #require(graph.root as? GuideFolder)
        #expect(root.files[0].folder.object === root)
    }

    @Test func liveLightUpdatesInPlace() throws {
        var family = ObjectFamily()
        family.register(GuideLiveLight.self)
        let map = ObjectIdentityMap()
        let decoder = CoatyJSONDecoder(family: family, options: .init(identityTracking: .across(map)))
        let light = GuideLight(name: "Hall", floor: 7, isOn: false)
        let hall = try decoder.decode(GuideLiveLight.self, from: CoatyJSONEncoder().encode(light))
        let switched = GuideLight(name: "Hall", objectID: light.objectID, floor: 7, isOn: true)
        let again = try decoder.decode(GuideLiveLight.self, from: CoatyJSONEncoder().encode(switched))
        #expect(hall === again && hall.isOn)
    }
}
