import CoatyModel
import Foundation
import Testing

/// An app class that a buggy peer gives the object id of a `Light`.
final class Switch: CoatyObject, @unchecked Sendable {
    override class var objectType: String { "com.example.Switch" }
    override class var propertyKeys: Set<String> { ["isClosed"] }
    let isClosed: Bool

    init(name: String, isClosed: Bool, objectID: ObjectID = .random()) {
        self.isClosed = isClosed
        super.init(objectID: objectID, name: name)
    }

    required init(from decoder: any Decoder) throws {
        self.isClosed = try decoder.decodeProperty("isClosed")
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        try encoder.encodeProperty(self.isClosed, forKey: "isClosed")
    }
}

/// Identity tracking shares an instance only between occurrences of the same object
/// (same id, object type and class), never hands out another object that shares the id.
struct IdentityConflictTests {
    static let light =
        #"{"objectId":"same","name":"l","objectType":"com.example.Light","coreType":"CoatyObject","isOn":true,"luminosity":1}"#
    static let lightSwitch =
        #"{"objectId":"same","name":"s","objectType":"com.example.Switch","coreType":"CoatyObject","isClosed":true}"#
    static let family: ObjectFamily = [Light.self, Switch.self]

    @Test func sameIDWithAnotherTypeStaysItsOwnObjectWithinADecode() throws {
        let objects = try Self.family.decode(
            [CoatyObject].self,
            from: bytes("[\(Self.light),\(Self.lightSwitch),\(Self.lightSwitch),\(Self.light)]")
        )
        #expect(objects[0] is Light && objects[1] is Switch)
        // Occurrences of each object still share one instance.
        #expect(objects[1] === objects[2] && objects[0] === objects[3])
    }

    @Test func switchIsNotRejectedBecauseALightWithItsIDCameFirst() throws {
        struct Pair: Decodable {
            let light: Light
            let toggle: Switch
            init(from decoder: any Decoder) throws {
                self.light = try decoder.decodeProperty("light")
                self.toggle = try decoder.decodeProperty("toggle")
            }
        }
        let pair = try CoatyJSONDecoder(family: Self.family).decode(
            Pair.self,
            from: bytes(#"{"light":\#(Self.light),"toggle":\#(Self.lightSwitch)}"#)
        )
        #expect(pair.toggle.isClosed && pair.light.isOn)
    }

    @Test(arguments: [ObjectIdentityMap.Policy.keepExisting, .replaceWithNewer])
    func sharedIdentityMapDoesNotHandOutAnotherObjectWithTheID(policy: ObjectIdentityMap.Policy) throws {
        let map = ObjectIdentityMap(policy: policy)
        let options = ObjectDecodingOptions(identityTracking: .across(map))
        let light = try Self.family.decode(Light.self, from: bytes(Self.light), options: options)
        let toggle = try Self.family.decode(Switch.self, from: bytes(Self.lightSwitch), options: options)
        #expect(toggle.isClosed)
        // The same object again is still shared as the policy says.
        let again = try Self.family.decode(CoatyObject.self, from: bytes(Self.light), options: options)
        #expect((again === light) == (policy == .keepExisting))
    }

    /// Objects of the same type that a family without the class decodes as `CoatyObject` and one with
    /// it decodes as `Light` are not the same kind of instance either.
    @Test func sameTypeDecodedAsAnotherClassIsNotShared() throws {
        let map = ObjectIdentityMap()
        let options = ObjectDecodingOptions(identityTracking: .across(map))
        let plain = try ObjectFamily().decode(CoatyObject.self, from: bytes(Self.light), options: options)
        let typed = try Self.family.decode(Light.self, from: bytes(Self.light), options: options)
        #expect(type(of: plain) == CoatyObject.self && typed.isOn)
    }
}
