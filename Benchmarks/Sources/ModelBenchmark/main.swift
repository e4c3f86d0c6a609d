// Model benchmark: polymorphic decoding through ObjectFamily against a plain JSONDecoder decode of the
// concrete type, the same for encoding, and identity tracking on/off.
// (That decoding valid input throws no error is checked by the tests: DecodingDiagnosticsTests.)
// Run with: swift run -c release --package-path Benchmarks ModelBenchmark
import CoatyModel
import Foundation

/// An Advertise event whose object is decoded polymorphically, as the communication layer does it.
struct PolymorphicAdvertise: Codable {
    let object: CoatyObject
    let privateData: [String: AnyCodable]?

    private enum CodingKeys: String, CodingKey { case object, privateData }

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

/// The same event with the concrete class, decoded with a plain `JSONDecoder`.
struct ConcreteAdvertise: Codable {
    let object: Sensor
    let privateData: [String: AnyCodable]?
}

let payload = Data(
    #"""
    {"object":{"objectId":"4b8c9a62-3f0e-4f57-9d6c-2a1b5e7d9c01","objectType":"coaty.sensorThings.Sensor",
    "coreType":"CoatyObject","name":"Temperature sensor, hall 3","externalId":"plant-7/hall-3/temp-12",
    "parentObjectId":"0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9","locationId":"9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d",
    "description":"PT100 resistance thermometer mounted 2.5 m above floor level near the north gate",
    "encodingType":"application/pdf","metadata":"https://example.com/datasheets/pt100-class-a.pdf",
    "unitOfMeasurement":{"name":"Degree Celsius","symbol":"degC","definition":"http://www.qudt.org/qudt/owl/1.0.0/unit/Instances.html#DegreeCelsius"},
    "observationType":"http://www.opengis.net/def/observationType/OGC-OM/2.0/OM_Measurement",
    "phenomenonTime":{"start":1700000000000,"end":1700003600000},
    "observedProperty":{"name":"Air temperature","definition":"http://dbpedia.org/page/Temperature","description":"Ambient air temperature"},
    "isDeactivated":false},
    "privateData":{"reason":"periodic","sequence":1042}}
    """#.utf8.filter { $0 != UInt8(ascii: "\n") }
)

let family = ObjectFamily()
let plainDecoder = JSONDecoder()
let coatyDecoder = CoatyJSONDecoder(family: family)
let untrackedDecoder = CoatyJSONDecoder(family: family, options: ObjectDecodingOptions(identityTracking: .disabled))
let encoder = CoatyJSONEncoder()
let foundationEncoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.withoutEscapingSlashes]
    return encoder
}()

/// Times several variants in interleaved rounds (so that load changes on a shared machine hit all of
/// them alike) and returns each variant's best time per iteration, in nanoseconds.
func measure(
    iterations: Int = 2_000,
    rounds: Int = 15,
    _ variants: [(String, () throws -> Void)]
) throws -> [String: Double] {
    let clock = ContinuousClock()
    var best: [String: Double] = [:]
    for _ in 0..<rounds {
        for (name, body) in variants {
            let elapsed = try clock.measure {
                for _ in 0..<iterations { try body() }
            }
            let (seconds, attoseconds) = elapsed.components
            let nanoseconds = (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(iterations)
            best[name] = min(best[name] ?? .infinity, nanoseconds)
        }
    }
    return best
}

let polymorphicJSONDecoder = JSONDecoder()

/// Decodes with a reused `JSONDecoder`, installing fresh per-decode options (identity scope) each time.
func jsonDecoderPolymorphic() throws -> PolymorphicAdvertise {
    polymorphicJSONDecoder.userInfo = ObjectDecodingOptions().userInfo(family: family)
    return try polymorphicJSONDecoder.decode(PolymorphicAdvertise.self, from: payload)
}

// Sanity: every path decodes the same object.
let concrete = try plainDecoder.decode(ConcreteAdvertise.self, from: payload)
let polymorphic = try coatyDecoder.decode(PolymorphicAdvertise.self, from: payload)
precondition(polymorphic.object is Sensor && polymorphic.object.objectID == concrete.object.objectID)
let viaJSONDecoder = try jsonDecoderPolymorphic()
precondition(viaJSONDecoder.object is Sensor)

print("ModelBenchmark: Advertise event of \(payload.count) bytes, best of 15 interleaved rounds × 2000 iterations")

let concreteEvent = ConcreteAdvertise(object: concrete.object, privateData: concrete.privateData)

// A Retrieve-like array of 64 objects (tasks and identities, some ids repeated) for identity tracking.
let objectsPayload = Data(
    ("["
        + (0..<64).map { index in
            let id = "00000000-0000-4000-8000-0000000000\(String(format: "%02d", index % 48))"
            return index.isMultiple(of: 2)
                ? #"{"objectId":"\#(id)","objectType":"coaty.Task","coreType":"Task","name":"Task \#(index)","#
                    + #""creatorId":"c","creationTimestamp":1700000000000,"status":1,"description":"work"}"#
                : #"{"objectId":"\#(id)","objectType":"coaty.Identity","coreType":"Identity","name":"Agent \#(index)"}"#
        }.joined(separator: ",") + "]").utf8
)
let times = try measure([
    ("baselineDecode", { _ = try plainDecoder.decode(ConcreteAdvertise.self, from: payload) }),
    ("polymorphicDecode", { _ = try coatyDecoder.decode(PolymorphicAdvertise.self, from: payload) }),
    ("polymorphicUntracked", { _ = try untrackedDecoder.decode(PolymorphicAdvertise.self, from: payload) }),
    ("polymorphicJSONDecoder", { _ = try jsonDecoderPolymorphic() }),
    ("concreteCoaty", { _ = try coatyDecoder.decode(ConcreteAdvertise.self, from: payload) }),
    ("arrayTracked", { _ = try coatyDecoder.decode([CoatyObject].self, from: objectsPayload) }),
    ("arrayUntracked", { _ = try untrackedDecoder.decode([CoatyObject].self, from: objectsPayload) }),
    ("baselineEncode", { _ = try foundationEncoder.encode(concreteEvent) }),
    ("polymorphicEncode", { _ = try encoder.encode(polymorphic) }),
    ("concreteCoatyEncode", { _ = try encoder.encode(concreteEvent) }),
    ("foundationPolymorphicEncode", { _ = try foundationEncoder.encode(polymorphic) }),
])
let baselineDecode = times["baselineDecode"] ?? .nan
let polymorphicDecode = times["polymorphicDecode"] ?? .nan
let polymorphicUntracked = times["polymorphicUntracked"] ?? .nan
let polymorphicJSONDecoderTime = times["polymorphicJSONDecoder"] ?? .nan
let concreteCoaty = times["concreteCoaty"] ?? .nan
let baselineEncode = times["baselineEncode"] ?? .nan
let polymorphicEncode = times["polymorphicEncode"] ?? .nan

func row(_ label: String, _ nanoseconds: Double, _ baseline: Double, target: String = "") {
    let ratio = nanoseconds / baseline
    let padded = label.padding(toLength: 62, withPad: " ", startingAt: 0)
    print("\(padded) \(String(format: "%8.2f µs  %5.2f×", nanoseconds / 1000, ratio)) \(target)")
}

print("\nDecode (baseline: JSONDecoder, concrete ConcreteAdvertise)")
row("JSONDecoder, concrete type (baseline)", baselineDecode, baselineDecode)
row(
    "CoatyJSONDecoder, polymorphic via ObjectFamily, identity on",
    polymorphicDecode,
    baselineDecode,
    target: "target ≤ 1.15×"
)
row("JSONDecoder, polymorphic via ObjectFamily in userInfo", polymorphicJSONDecoderTime, baselineDecode)
row("CoatyJSONDecoder, concrete type", concreteCoaty, baselineDecode)
print("\nSame-decoder ratios (dispatch overhead only)")
row("JSONDecoder: polymorphic (identity on) vs concrete", polymorphicJSONDecoderTime, baselineDecode)
row("CoatyJSONDecoder: polymorphic (identity on) vs concrete", polymorphicDecode, concreteCoaty)
print("\nIdentity tracking (baseline: CoatyJSONDecoder, polymorphic, tracking off)")
row("tracking off (baseline)", polymorphicUntracked, polymorphicUntracked)
row("tracking on (within decode)", polymorphicDecode, polymorphicUntracked, target: "target ≤ 1.10×")
print("\nIdentity tracking, array of 64 objects (\(objectsPayload.count) bytes; baseline: tracking off)")
row("tracking off (baseline)", times["arrayUntracked"] ?? .nan, times["arrayUntracked"] ?? .nan)
row(
    "tracking on (within decode)",
    times["arrayTracked"] ?? .nan,
    times["arrayUntracked"] ?? .nan,
    target: "target ≤ 1.10×"
)
print("\nEncode (baseline: JSONEncoder, concrete ConcreteAdvertise)")
row("JSONEncoder, concrete type (baseline)", baselineEncode, baselineEncode)
row("CoatyJSONEncoder, polymorphic CoatyObject property", polymorphicEncode, baselineEncode)
row("JSONEncoder, polymorphic CoatyObject property", times["foundationPolymorphicEncode"] ?? .nan, baselineEncode)
row("CoatyJSONEncoder, concrete type", times["concreteCoatyEncode"] ?? .nan, baselineEncode)
print("\nSame-encoder ratio (dispatch overhead only)")
row("CoatyJSONEncoder: polymorphic vs concrete", polymorphicEncode, times["concreteCoatyEncode"] ?? .nan)
