import CoatyModel
import Foundation
import Testing

/// A struct whose `Codable` conformance is synthesized, with object-valued properties.
private struct Envelope: Codable {
    let object: CoatyObject
    let task: CoatyTask
    let objects: [CoatyObject]
    let optional: CoatyObject?
}

private func envelopeJSON() throws -> Data {
    let light = Light(name: "Hall", isOn: true, luminosity: 0.5)
    let hello = HelloWorldTask(name: "Greet", creatorID: "c", urgency: 2)
    let envelope = Envelope(object: light, task: hello, objects: [hello, light], optional: light)
    return try CoatyJSONEncoder().encode(envelope)
}

/// A subclass is never lost silently when an object-valued property is decoded by
/// synthesized `Codable` or through a generic `Decodable`.
struct SubclassPreservationTests {
    @Test func synthesizedCodableKeepsTheSubclassesUnderCoatyJSONDecoder() throws {
        let decoder = CoatyJSONDecoder(family: [Light.self, HelloWorldTask.self])
        let envelope = try decoder.decode(Envelope.self, from: try envelopeJSON())
        #expect(envelope.object is Light)
        #expect((envelope.task as? HelloWorldTask)?.urgency == 2)
        #expect(envelope.objects[0] is HelloWorldTask && envelope.objects[1] is Light)
        #expect(envelope.optional is Light)
        // Through the family, so identity tracking applies as it does to decodeObject.
        #expect(envelope.object === envelope.objects[1] && envelope.optional === envelope.object)
    }

    @Test func genericDecodableKeepsTheSubclass() throws {
        func decode<T: Decodable>(_ type: T.Type, from json: Data) throws -> T {
            try CoatyJSONDecoder(family: [Light.self]).decode(type, from: json)
        }
        let json = try CoatyJSONEncoder().encode(Light(name: "Hall", isOn: true, luminosity: 0.5))
        #expect(try decode(CoatyObject.self, from: json) is Light)
        #expect(
            try AnyCodable(json: json).decode(CoatyObject.self, userInfo: [.objectFamily: ObjectFamily([Light.self])])
                is Light
        )
    }

    /// Foundation's decoder calls `CoatyObject.init(from:)` itself: the object would lose its class, so
    /// the decode fails with an error that says how to decode it.
    @Test func foreignDecoderFailsSayingHowToDecodeInsteadOfDowngrading() throws {
        let decoder = JSONDecoder()
        decoder.userInfo = ObjectDecodingOptions().userInfo(family: [Light.self, HelloWorldTask.self])
        #expect {
            try decoder.decode(Envelope.self, from: try envelopeJSON())
        } throws: { error in
            "\(error)".contains("decodeObject") && "\(error)".contains("Light")
        }
    }

    /// A Task in a `CoatyObject` property, under a decoder without a family: the message used to be a
    /// core-type mismatch; now it says how to decode the object.
    @Test func taskInACoatyObjectPropertySaysHowToDecodeIt() throws {
        struct Holder: Decodable { let object: CoatyObject }
        let task = CoatyTask(name: "t", status: .done, creatorID: "c", creationTimestamp: 1)
        let json = try CoatyJSONEncoder().encode(["object": task] as [String: CoatyObject])
        #expect {
            try JSONDecoder().decode(Holder.self, from: json)
        } throws: { error in
            "\(error)".contains("decodes as CoatyTask") && "\(error)".contains("decodeObject")
        }
        // Our decoder keeps it a task.
        #expect(try CoatyJSONDecoder().decode(Holder.self, from: json).object is CoatyTask)
    }

    /// The property helpers go through the family under any decoder.
    @Test func propertyHelpersKeepTheSubclassUnderFoundationsDecoder() throws {
        let source = Thermometer(name: "Hall", calibration: Light(name: "Reference", isOn: false, luminosity: 0))
        let decoder = JSONDecoder()
        decoder.userInfo = ObjectDecodingOptions().userInfo(family: [Light.self, Thermometer.self])
        struct Holder: Decodable {
            let source: Thermometer
            init(from decoder: any Decoder) throws {
                self.source = try decoder.decodeProperty("source")
            }
        }
        let json = try CoatyJSONEncoder().encode(["source": source] as [String: CoatyObject])
        let holder = try decoder.decode(Holder.self, from: json)
        #expect(holder.source.calibration is Light)
    }

    /// An object of an unregistered type under a decoder without the family is not a lost subclass:
    /// the agent does not know the class, and the object decodes as its core type, as documented.
    @Test func unknownClassesStillFallBackUnderForeignDecoders() throws {
        struct Holder: Decodable { let object: CoatyObject }
        let json = try CoatyJSONEncoder().encode(
            ["object": Light(name: "Hall", isOn: true, luminosity: 1)] as [String: CoatyObject]
        )
        let holder = try JSONDecoder().decode(Holder.self, from: json)
        #expect(type(of: holder.object) == CoatyObject.self)
        #expect(holder.object.customProperties["isOn"] == true)
    }
}
