import CoatyModel
import Foundation
import Synchronization
import Testing

/// A value type that is not a Coaty object, built by a factory with per-decode context.
struct Price: Decodable, Equatable, Sendable {
    let cents: Int
    let currency: String

    init(cents: Int, currency: String) {
        self.cents = cents
        self.currency = currency
    }

    init(from decoder: any Decoder) throws {
        self.cents = try decoder.singleValueContainer().decode(Int.self)
        self.currency = "?"
    }
}

/// The currency a decode's prices are in: the factory context.
struct Currency: Sendable {
    let code: String
}

/// An app's live model of a light: one instance per object id, updated in place.
final class LiveLight: DecoderUpdatable {
    let objectID: ObjectID
    private let state: Mutex<(name: String, isOn: Bool, updates: Int)>

    var name: String { self.state.withLock { $0.name } }
    var isOn: Bool { self.state.withLock { $0.isOn } }
    var updates: Int { self.state.withLock { $0.updates } }

    init(from decoder: any Decoder) throws {
        self.objectID = try Self.decodingID(in: decoder)
        let name: String = try decoder.decodeProperty("name")
        let isOn: Bool = try decoder.decodeProperty("isOn")
        self.state = Mutex((name: name, isOn: isOn, updates: 0))
    }

    func update(from decoder: any Decoder) throws {
        let name: String = try decoder.decodeProperty("name")
        let isOn: Bool = try decoder.decodeProperty("isOn")
        self.state.withLock { $0 = (name, isOn, $0.updates + 1) }
    }
}

/// An app's store of live lights, found through the decode's context.
final class LightStore: UpdatableInstanceStore {
    private let lights = Mutex<[ObjectID: LiveLight]>([:])

    func add(_ light: LiveLight) {
        self.lights.withLock { $0[light.objectID] = light }
    }

    func instance<T: DecoderUpdatable>(of type: T.Type, for objectID: ObjectID) -> T? {
        self.lights.withLock { $0[objectID] } as? T
    }
}

private func lightJSON(_ id: String, name: String, isOn: Bool) -> String {
    #"{"objectId":"\#(id)","objectType":"com.example.Light","coreType":"CoatyObject","name":"\#(name)","isOn":\#(isOn),"luminosity":1}"#
}

/// Factories for types that are not Coaty objects, and update in place.
struct FactoryAndUpdateTests {
    static let priceFamily: ObjectFamily = {
        var family = ObjectFamily()
        family.register(Price.self) { decoder, context in
            Price(
                cents: try decoder.singleValueContainer().decode(Int.self),
                currency: (context as? Currency)?.code ?? "EUR"
            )
        }
        return family
    }()

    @Test func factoryBuildsAValueTypeWithTheDecodesContext() throws {
        struct Order: Decodable {
            let total: Price
            let lines: [Price]
            let discount: Price?
        }
        let json = Array(#"{"total":300,"lines":[100,200],"discount":5}"#.utf8)
        let decoder = CoatyJSONDecoder(family: Self.priceFamily, options: .init(factoryContext: Currency(code: "CHF")))
        let order = try decoder.decode(Order.self, from: json)
        #expect(order.total == Price(cents: 300, currency: "CHF"))
        #expect(order.lines.map(\.currency) == ["CHF", "CHF"] && order.discount?.currency == "CHF")
        #expect(try decoder.decode(Price.self, from: Array("7".utf8)).currency == "CHF")
        // Without context, the factory's default; without the family, `init(from:)`.
        #expect(try Self.priceFamily.decode(Price.self, from: Array("7".utf8)).currency == "EUR")
        #expect(try CoatyJSONDecoder().decode(Price.self, from: Array("7".utf8)).currency == "?")
    }

    @Test func factoryAppliesUnderFoundationsDecoderThroughDecodeValue() throws {
        struct Order: Decodable {
            let total: Price
            init(from decoder: any Decoder) throws {
                self.total = try decoder.decodeProperty("total")
            }
        }
        let decoder = JSONDecoder()
        decoder.userInfo = ObjectDecodingOptions(factoryContext: Currency(code: "USD")).userInfo(
            family: Self.priceFamily
        )
        #expect(try decoder.decode(Order.self, from: Data(#"{"total":1}"#.utf8)).total.currency == "USD")
    }

    @Test func liveInstanceKeepsItsIdentityAcrossDecodesThroughTheIdentityMap() throws {
        var family = ObjectFamily()
        family.register(LiveLight.self)
        let map = ObjectIdentityMap()
        let decoder = CoatyJSONDecoder(family: family, options: .init(identityTracking: .across(map)))
        let first = try decoder.decode(LiveLight.self, from: bytes(lightJSON("l1", name: "Hall", isOn: false)))
        let second = try decoder.decode(LiveLight.self, from: bytes(lightJSON("l1", name: "Hall", isOn: true)))
        #expect(first === second)
        #expect(first.isOn && first.updates == 1)
        // In an array, and another id, too.
        let all = try decoder.decode(
            [LiveLight].self,
            from: bytes(
                "[\(lightJSON("l2", name: "Desk", isOn: true)),\(lightJSON("l1", name: "Hallway", isOn: false))]"
            )
        )
        #expect(all[1] === first && first.name == "Hallway" && !first.isOn && first.updates == 2)
        #expect(map.instance(of: LiveLight.self, for: "l2") === all[0])
    }

    @Test func liveInstanceIsFoundThroughTheContext() throws {
        var family = ObjectFamily()
        family.register(LiveLight.self) { decoder, context in
            let light = try LiveLight(from: decoder)
            (context as? LightStore)?.add(light)
            return light
        }
        let store = LightStore()
        let decoder = CoatyJSONDecoder(family: family, options: .init(factoryContext: store))
        let first = try decoder.decode(LiveLight.self, from: bytes(lightJSON("l1", name: "Hall", isOn: false)))
        let second = try decoder.decode(LiveLight.self, from: bytes(lightJSON("l1", name: "Hall", isOn: true)))
        #expect(first === second && second.isOn)
        #expect(store.instance(of: LiveLight.self, for: "l1") === first)
    }

    @Test func withinOneDecodeOccurrencesAreOneInstanceAndTheLaterDataWins() throws {
        var family = ObjectFamily()
        family.register(LiveLight.self)
        let lights = try family.decode(
            [LiveLight].self,
            from: bytes("[\(lightJSON("l1", name: "a", isOn: false)),\(lightJSON("l1", name: "b", isOn: true))]")
        )
        #expect(lights[0] === lights[1] && lights[0].name == "b")
        // Separate decodes without a map or a store make separate instances.
        let again = try family.decode(LiveLight.self, from: bytes(lightJSON("l1", name: "a", isOn: false)))
        #expect(again !== lights[0])
    }

    @Test func aFailedUpdateFailsTheDecode() throws {
        var family = ObjectFamily()
        family.register(LiveLight.self)
        let map = ObjectIdentityMap()
        let options = ObjectDecodingOptions(identityTracking: .across(map))
        let light = try family.decode(
            LiveLight.self,
            from: bytes(lightJSON("l1", name: "a", isOn: true)),
            options: options
        )
        #expect(throws: DecodingError.self) {
            try family.decode(
                LiveLight.self,
                from: bytes(#"{"objectId":"l1","name":"a","isOn":"yes"}"#),
                options: options
            )
        }
        #expect(light.isOn && light.updates == 0)
    }
}
