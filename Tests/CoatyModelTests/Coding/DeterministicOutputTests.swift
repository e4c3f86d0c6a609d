import CoatyModel
import Foundation
import Testing

/// Equal values encode to the same bytes in every process, and `.sortedKeys` sorts
/// every object's keys.
struct DeterministicOutputTests {
    /// Twenty custom properties: a dictionary's order, which Swift seeds per process, would hardly ever
    /// be the sorted one.
    static let properties: [String: AnyCodable] = Dictionary(
        uniqueKeysWithValues: (0..<20).map {
            (String(UnicodeScalar(UInt8(ascii: "a") + UInt8($0))), AnyCodable.int($0))
        }
    )

    @Test func customPropertiesAndAnyCodableObjectsAreWrittenInKeyOrder() throws {
        let object = CoatyObject(objectType: "x.T", objectID: "o", name: "n", customProperties: Self.properties)
        let text = String(decoding: try CoatyJSONEncoder().encode(object), as: UTF8.self)
        let members = (0..<20).map { #""\#(UnicodeScalar(UInt8(ascii: "a") + UInt8($0)))":\#($0)"# }
        // The same bytes in every process: custom properties sorted, then the base fields in order.
        #expect(
            text == "{" + members.joined(separator: ",")
                + #","objectType":"x.T","coreType":"CoatyObject","objectId":"o","name":"n"}"#
        )
        let value = AnyCodable.object(Self.properties)
        #expect(value.jsonString == "{" + members.joined(separator: ",") + "}")
    }

    @Test func sortedKeysSortsEveryObjectIncludingDictionariesAndClassFields() throws {
        struct Event: Encodable {
            let zebra = 1
            let counts: [String: Int] = Dictionary(uniqueKeysWithValues: (0..<20).map { ("k\($0 + 10)", $0) })
            let apple = "a"
        }
        let encoder = CoatyJSONEncoder(outputFormatting: .sortedKeys)
        let text = String(decoding: try encoder.encode(Event()), as: UTF8.self)
        let counts = (0..<20).map { #""k\#($0 + 10)":\#($0)"# }.joined(separator: ",")
        #expect(text == #"{"apple":"a","counts":{\#(counts)},"zebra":1}"#)
        let object = CoatyObject(objectType: "x.T", objectID: "o", name: "n", customProperties: ["b": 1, "Z": 2])
        #expect(
            String(decoding: try encoder.encode(object), as: UTF8.self)
                == #"{"Z":2,"b":1,"coreType":"CoatyObject","name":"n","objectId":"o","objectType":"x.T"}"#
        )
    }

    /// Code point order (UTF-8 byte order), not a locale's.
    @Test func keyOrderIsByCodePoint() throws {
        let value = try AnyCodable(json: #"{"é":1,"e":2,"z":3,"É":4,"Z":5}"#)
        let encoder = CoatyJSONEncoder(outputFormatting: .sortedKeys)
        #expect(String(decoding: try encoder.encode(value), as: UTF8.self) == #"{"Z":5,"e":2,"z":3,"É":4,"é":1}"#)
        #expect(value.jsonString == #"{"Z":5,"e":2,"z":3,"É":4,"é":1}"#)
    }
}
