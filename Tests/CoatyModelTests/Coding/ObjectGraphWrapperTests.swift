import CoatyModel
import Foundation
import Testing

/// A single-value wrapper around an object, the way apps wrap a value in a type of their own.
struct ObjectRef: Codable, Sendable {
    let object: CoatyObject

    init(_ object: CoatyObject) {
        self.object = object
    }

    init(from decoder: any Decoder) throws {
        self.object = try decoder.singleValueContainer().decode(CoatyObject.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.object)
    }
}

/// An object that holds shared objects through a wrapper and through a synthesized array.
final class Shelf: CoatyObject, @unchecked Sendable {
    override class var objectType: String { "com.example.Shelf" }
    override class var propertyKeys: Set<String> { ["main", "items"] }
    let main: ObjectRef
    let items: [CoatyObject]

    init(name: String, main: CoatyObject, items: [CoatyObject]) {
        self.main = ObjectRef(main)
        self.items = items
        super.init(name: name)
    }

    private enum CodingKeys: String, CodingKey { case main, items }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.main = try container.decode(ObjectRef.self, forKey: .main)
        self.items = try container.decode([CoatyObject].self, forKey: .items)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.main, forKey: .main)
        try container.encode(self.items, forKey: .items)
    }
}

/// An object graph writes a reference wherever it reads one, whichever container
/// the object is encoded into.
struct ObjectGraphWrapperTests {
    @Test func singleValueWrapperAndSynthesizedArrayWriteReferences() throws {
        let book = Light(name: "Lamp", isOn: true, luminosity: 1)
        let shelf = Shelf(name: "Shelf", main: book, items: [book, book])
        let json = try ObjectGraphEncoder().encode(shelf)
        let document = try AnyCodable(json: json)
        #expect(document["objects"]?.arrayValue?.count == 2)
        #expect(document["objects"]?[0]?["main"] == ["$ref": 1])
        #expect(document["objects"]?[0]?["items"] == [["$ref": 1], ["$ref": 1]])

        let graph = try ObjectGraphDecoder(family: [Shelf.self, Light.self]).decode(from: json)
        let decoded = try #require(graph.root as? Shelf)
        #expect(decoded.main.object is Light)
        #expect(decoded.main.object === decoded.items[0] && decoded.items[0] === decoded.items[1])
    }

    @Test func onTheWireTheWrapperHoldsTheObjectItself() throws {
        let shelf = Shelf(name: "Shelf", main: Light(name: "Lamp", isOn: true, luminosity: 1), items: [])
        let json = try AnyCodable(json: CoatyJSONEncoder().encode(shelf))
        #expect(json["main"]?["name"] == "Lamp")
        let decoded = try ObjectFamily([Shelf.self, Light.self]).decode(
            Shelf.self,
            from: CoatyJSONEncoder().encode(shelf)
        )
        #expect(decoded.main.object is Light)
    }
}
