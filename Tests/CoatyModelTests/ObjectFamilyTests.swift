import CoatyModel
import Foundation
import Synchronization
import Testing

private func object(_ id: String, type: String = "x.T", core: String = "CoatyObject", extra: String = "") -> String {
    #"{"objectId":"\#(id)","name":"\#(id)","objectType":"\#(type)","coreType":"\#(core)"\#(extra)}"#
}

private let task = #","creatorId":"c","creationTimestamp":1,"status":1"#

struct ObjectFamilyTests {
    @Test func registeredClassDecodes() throws {
        let family: ObjectFamily = [Light.self]
        let json = object("l1", type: "com.example.Light", extra: #","isOn":true,"luminosity":0.5,"room":"hall""#)
        let light = try family.decode(Light.self, from: bytes(json))
        #expect(light.isOn && light.luminosity == 0.5)
        #expect(light.customProperties == ["room": "hall"])
        #expect(try AnyCodable(json: CoatyJSONEncoder().encode(light)) == AnyCodable(json: json))
    }

    @Test func unknownObjectTypeFallsBackToItsCoreTypeKeepingExtraFields() throws {
        let json = object("t1", type: "com.example.Robot", core: "Task", extra: task + #","arm":{"joints":6}"#)
        let decoded = try ObjectFamily().decode(CoatyObject.self, from: bytes(json))
        let robot = try #require(decoded as? CoatyTask)
        #expect(robot.objectType == "com.example.Robot")
        #expect(robot.status == .inProgress)
        #expect(robot.customProperties == ["arm": ["joints": 6]])
        #expect(try AnyCodable(json: CoatyJSONEncoder().encode(robot)) == AnyCodable(json: json))
    }

    @Test func unregisteredCustomClassDecodesAsCoatyObject() throws {
        let json = object("l1", type: "com.example.Light", extra: #","isOn":true,"luminosity":1"#)
        let decoded = try ObjectFamily().decode(CoatyObject.self, from: bytes(json))
        #expect(type(of: decoded) == CoatyObject.self)
        #expect(decoded.customProperties == ["isOn": true, "luminosity": 1])
    }

    @Test func wrongClassIsATypeMismatch() throws {
        #expect(throws: DecodingError.self) {
            try ObjectFamily().decode(
                CoatyTask.self,
                from: bytes(object("i", type: "coaty.Identity", core: "Identity"))
            )
        }
    }

    static let mixed =
        "["
        + [
            object("a", type: "coaty.Task", core: "Task", extra: task),
            object("b", type: "com.example.Mystery", core: "Gizmo"),
            object("c", type: "coaty.Identity", core: "Identity"),
            object("d", type: "com.example.Robot", core: "Task", extra: task + #","arm":1"#),
            #""not an object""#,
            object("f", type: "com.example.Light", extra: #","isOn":false,"luminosity":0"#),
        ].joined(separator: ",") + "]"

    @Test func heterogeneousArrayFailsNamingTheIndex() throws {
        do {
            _ = try ObjectFamily([Light.self]).decode([CoatyObject].self, from: bytes(Self.mixed))
            Issue.record("decoded an array with a bad element")
        } catch {
            #expect(codingPath(of: error) == ["[1]", "coreType"])
            #expect("\(error)".contains("Gizmo"))
        }
    }

    @Test func heterogeneousArraySkipsAndReportsBadElements() throws {
        let collector = SkipCollector()
        let options = ObjectDecodingOptions(elementFailurePolicy: .skip { collector.record($0) })
        let objects = try ObjectFamily([Light.self]).decode(
            [CoatyObject].self,
            from: bytes(Self.mixed),
            options: options
        )
        #expect(objects.map(\.objectID.rawValue) == ["a", "c", "d", "f"])
        #expect(objects[0] is CoatyTask && objects[1] is Identity && objects[2] is CoatyTask && objects[3] is Light)
        #expect(objects[2].customProperties == ["arm": 1])
        #expect(collector.all.map(\.index) == [1, 4])
        #expect(collector.all.first?.path == "[1]")
    }

    @Test func skippingAlsoAppliesToElementsOfTheWrongClass() throws {
        let collector = SkipCollector()
        let options = ObjectDecodingOptions(elementFailurePolicy: .skip { collector.record($0) })
        let tasks = try ObjectFamily().decode([CoatyTask].self, from: bytes(Self.mixed), options: options)
        #expect(tasks.map(\.objectID.rawValue) == ["a", "d"])
        #expect(collector.all.map(\.index) == [1, 2, 4, 5])
    }

    @Test func policyTravelsThroughJSONDecoderUserInfo() throws {
        let collector = SkipCollector()
        let options = ObjectDecodingOptions(elementFailurePolicy: .skip { collector.record($0) })
        struct Channel: Decodable {
            let objects: [CoatyObject]
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: AnyKey.self)
                let family = decoder.userInfo[.objectFamily] as? ObjectFamily ?? ObjectFamily()
                self.objects = try family.decodeObjects(
                    from: container.superDecoder(forKey: AnyKey(stringValue: "objects"))
                )
            }
        }
        let decoder = JSONDecoder()
        decoder.userInfo = options.userInfo(family: [Light.self])
        let channel = try decoder.decode(Channel.self, from: Data(#"{"objects":\#(Self.mixed)}"#.utf8))
        #expect(channel.objects.count == 4)
        #expect(collector.all.map(\.path) == ["objects[1]", "objects[4]"])
    }

    @Test func factoryReceivesPerDecodeContext() throws {
        final class Store: Sendable {
            let names = Mutex<[String]>([])
        }
        var family = ObjectFamily()
        family.register(objectType: "com.example.Stored") { decoder, context in
            let object = try CoatyObject(from: decoder)
            guard let store = context as? Store else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "no store"))
            }
            store.names.withLock { $0.append(object.name) }
            return object
        }
        let storeA = Store()
        let storeB = Store()
        let json = bytes(
            "[" + object("s1", type: "com.example.Stored") + "," + object("s2", type: "com.example.Stored") + "]"
        )
        _ = try family.decode([CoatyObject].self, from: json, options: .init(factoryContext: storeA))
        _ = try family.decode(
            CoatyObject.self,
            from: bytes(object("s3", type: "com.example.Stored")),
            options: .init(factoryContext: storeB)
        )
        #expect(storeA.names.withLock { $0 } == ["s1", "s2"])
        #expect(storeB.names.withLock { $0 } == ["s3"])
        #expect(throws: DecodingError.self) { try family.decode(CoatyObject.self, from: json) }
    }

    /// coaty-js validates an object by its `coreType` alone (`CoreTypes.isObject`), so a built-in object
    /// type with another core type is valid there and decodes as the class of that core type here.
    @Test func builtInObjectTypeWithAnotherCoreTypeFallsBackToThatCoreType() throws {
        let json = object("t", type: "coaty.Task", core: "CoatyObject", extra: #","status":"open""#)
        let decoded = try ObjectFamily().decode(CoatyObject.self, from: bytes(json))
        #expect(ObjectIdentifier(type(of: decoded)) == ObjectIdentifier(CoatyObject.self))
        #expect(decoded.objectType == "coaty.Task" && decoded.coreType == .coatyObject)
        #expect(try AnyCodable(json: CoatyJSONEncoder().encode(decoded)) == AnyCodable(json: json))
        let thing = object("h", type: "coaty.sensorThings.Thing", core: "Identity")
        #expect(try ObjectFamily().decode(CoatyObject.self, from: bytes(thing)) is Identity)
        // A class the app registered keeps its core type.
        let light = object("l", type: "com.example.Light", core: "Task", extra: task)
        #expect(throws: DecodingError.self) {
            try ObjectFamily([Light.self]).decode(CoatyObject.self, from: bytes(light))
        }
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

@Suite(.timeLimit(.minutes(1)))
struct ObjectIdentityTests {
    static let twice = "[" + object("same") + "," + object("other") + "," + object("same") + "]"

    @Test func sameObjectIDBecomesOneInstanceWithinADecode() throws {
        let objects = try ObjectFamily().decode([CoatyObject].self, from: bytes(Self.twice))
        #expect(objects.count == 3)
        #expect(objects[0] === objects[2])
        #expect(objects[0] !== objects[1])
    }

    @Test func nestedObjectsShareInstancesToo() throws {
        let source = object("src", type: "coaty.IoSource", core: "IoSource", extra: #","valueType":"t""#)
        let node =
            #"{"objectId":"n","name":"n","objectType":"coaty.IoNode","coreType":"IoNode","ioSources":[\#(source)],"ioActors":[]}"#
        let objects = try ObjectFamily().decode([CoatyObject].self, from: bytes("[\(source),\(node)]"))
        let decoded = try #require(objects[1] as? IONode)
        #expect(decoded.ioSources?.first === objects[0])
    }

    /// A snapshot holds one version of an object: a history of snapshots keeps every version, and the
    /// snapshotted object is not shared with the rest of the decode (or an app's identity map).
    @Test(arguments: [false, true])
    func snapshotsKeepTheirOwnVersionOfTheObject(acrossDecodes: Bool) throws {
        func snapshot(_ id: String, version: String) -> String {
            let version = #"{"objectId":"o","name":"\#(version)","objectType":"x.T","coreType":"CoatyObject"}"#
            return
                #"{"objectId":"\#(id)","name":"s","parentObjectId":"o","objectType":"coaty.Snapshot","coreType":"Snapshot","creationTimestamp":1,"creatorId":"c","object":\#(version)}"#
        }
        let history = "[\(object("o")),\(snapshot("s1", version: "v1")),\(snapshot("s2", version: "v2"))]"
        let map = ObjectIdentityMap()
        let options = ObjectDecodingOptions(identityTracking: acrossDecodes ? .across(map) : .withinDecode)
        let objects = try CoatyJSONDecoder(options: options).decode([CoatyObject].self, from: bytes(history))
        let versions = objects.compactMap { ($0 as? Snapshot)?.object }
        #expect(versions.map(\.name) == ["v1", "v2"])
        #expect(versions[0] !== objects[0] && versions[1] !== objects[0])
        #expect(objects[0].name == "o")
    }

    /// `CoatyJSONDecoder` makes a decode's user info when first asked for (`DecodingUserInfo`). Read
    /// through `decoder.userInfo` or directly, as `decodeObject` reads it from our own decoder, it holds
    /// the app's entries, the family, and one identity scope, whichever way is read first.
    @Test(arguments: [true, false])
    func userInfoOfOneDecodeIsTheSameHoweverItIsRead(directFirst: Bool) throws {
        /// Hides our decoder's type, so the family and options are read from `userInfo`.
        struct Forwarding: Decoder {
            let base: any Decoder
            var codingPath: [any CodingKey] { self.base.codingPath }
            var userInfo: [CodingUserInfoKey: Any] { self.base.userInfo }
            func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
                try self.base.container(keyedBy: type)
            }
            func unkeyedContainer() throws -> any UnkeyedDecodingContainer { try self.base.unkeyedContainer() }
            func singleValueContainer() throws -> any SingleValueDecodingContainer {
                try self.base.singleValueContainer()
            }
        }
        struct Pair: Decodable {
            static let tag = CodingUserInfoKey(rawValue: "test.tag")!
            static let directFirst = CodingUserInfoKey(rawValue: "test.directFirst")!
            let tag: String?
            let viaUserInfo: CoatyObject
            let direct: CoatyObject
            enum CodingKeys: String, CodingKey { case first, second }
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                func viaUserInfo() throws -> CoatyObject {
                    let forwarding = Forwarding(base: try container.superDecoder(forKey: .first))
                    return try ObjectFamily.current(in: forwarding).decodeObject(from: forwarding)
                }
                if decoder.userInfo[Self.directFirst] as? Bool == true {
                    self.direct = try container.decodeObject(CoatyObject.self, forKey: .second)
                    self.viaUserInfo = try viaUserInfo()
                } else {
                    self.viaUserInfo = try viaUserInfo()
                    self.direct = try container.decodeObject(CoatyObject.self, forKey: .second)
                }
                self.tag = decoder.userInfo[Self.tag] as? String
            }
        }
        let light = object("same", type: "com.example.Light", extra: #","isOn":true,"luminosity":0.5"#)
        let decoder = CoatyJSONDecoder(
            family: [Light.self],
            userInfo: [Pair.tag: "mine", Pair.directFirst: directFirst]
        )
        let pair = try decoder.decode(Pair.self, from: bytes(#"{"first":\#(light),"second":\#(light)}"#))
        #expect(pair.tag == "mine")
        #expect(pair.viaUserInfo is Light)
        #expect(pair.viaUserInfo === pair.direct)
        // A second decode has a scope of its own.
        let again = try decoder.decode(Pair.self, from: bytes(#"{"first":\#(light),"second":\#(light)}"#))
        #expect(again.direct !== pair.direct)
    }

    @Test func trackingCanBeDisabled() throws {
        let objects = try ObjectFamily().decode(
            [CoatyObject].self,
            from: bytes(Self.twice),
            options: .init(identityTracking: .disabled)
        )
        #expect(objects[0] !== objects[2])
    }

    @Test func separateDecodesAreIndependentWithoutAMap() throws {
        let first = try ObjectFamily().decode(CoatyObject.self, from: bytes(object("same")))
        let second = try ObjectFamily().decode(CoatyObject.self, from: bytes(object("same")))
        #expect(first !== second)
    }

    @Test func identityMapSharesAcrossDecodes() throws {
        let map = ObjectIdentityMap()
        let options = ObjectDecodingOptions(identityTracking: .across(map))
        let first = try ObjectFamily().decode(CoatyObject.self, from: bytes(object("same")), options: options)
        let second = try ObjectFamily().decode([CoatyObject].self, from: bytes(Self.twice), options: options)
        #expect(first === second[0] && first === second[2])
        #expect(map.count == 2)
        #expect(map.object(for: "same") === first)
    }

    @Test func identityMapCanPreferNewerVersions() throws {
        let map = ObjectIdentityMap(policy: .replaceWithNewer)
        let options = ObjectDecodingOptions(identityTracking: .across(map))
        let first = try ObjectFamily().decode(CoatyObject.self, from: bytes(object("same")), options: options)
        let second = try ObjectFamily().decode([CoatyObject].self, from: bytes(Self.twice), options: options)
        #expect(first !== second[0])
        #expect(second[0] === second[2])
        #expect(map.object(for: "same") === second[0])
    }

    @Test func identityMapHoldsObjectsWeakly() throws {
        let map = ObjectIdentityMap()
        let options = ObjectDecodingOptions(identityTracking: .across(map))
        do {
            _ = try ObjectFamily().decode(CoatyObject.self, from: bytes(object("gone")), options: options)
        }
        #expect(map.object(for: "gone") == nil)
        #expect(map.count == 0)
    }

    @Test func identityMapIsSafeUnderConcurrentDecodes() async throws {
        let map = ObjectIdentityMap()
        let options = ObjectDecodingOptions(identityTracking: .across(map))
        let keep = try ObjectFamily().decode(CoatyObject.self, from: bytes(object("shared")), options: options)
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let decoded = try ObjectFamily().decode(
                        CoatyObject.self,
                        from: bytes(object("shared")),
                        options: options
                    )
                    return decoded === keep
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))
    }
}

struct NestedObjectTests {
    @Test func customIOSourceTypeInsideANodeFallsBackAndRoundTrips() throws {
        let json = #"""
            {"objectId":"n","name":"ctx","objectType":"coaty.IoNode","coreType":"IoNode","ioSources":[
            {"objectId":"s","name":"s","objectType":"com.example.Thermometer","coreType":"IoSource",
            "valueType":"t","calibrated":true}],"ioActors":[]}
            """#
        let node = try ObjectFamily().decode(IONode.self, from: bytes(json))
        let source = try #require(node.ioSources?.first)
        #expect(source.objectType == "com.example.Thermometer")
        #expect(source.customProperties == ["calibrated": true])
        #expect(node.ioActors?.isEmpty == true)
        #expect(try AnyCodable(json: CoatyJSONEncoder().encode(node)) == AnyCodable(json: json))
    }

    @Test func linkOnTheWireMustBeANonEmptyID() throws {
        let json = #"{"objectId":"a","name":"a","objectType":"com.example.File","coreType":"CoatyObject","folder":""}"#
        #expect {
            try ObjectFamily([File.self]).decode(File.self, from: bytes(json))
        } throws: { codingPath(of: $0).last == "folder" }
    }

    @Test func snapshotOfAnUnknownTypeKeepsItsFields() throws {
        let inner =
            #"{"objectId":"o","name":"o","objectType":"com.x.Gadget","coreType":"CoatyObject","v":[1,{"k":null}]}"#
        let json = #"""
            {"objectId":"s","name":"s","parentObjectId":"o","objectType":"coaty.Snapshot","coreType":"Snapshot",
            "creationTimestamp":1700000000001,"creatorId":"c","object":\#(inner)}
            """#
        let snapshot = try ObjectFamily().decode(Snapshot.self, from: bytes(json))
        #expect(snapshot.object.customProperties == ["v": [1, ["k": nil]]])
        #expect(try AnyCodable(json: CoatyJSONEncoder().encode(snapshot)) == AnyCodable(json: json))
    }
}
