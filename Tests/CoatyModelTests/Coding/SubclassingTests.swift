import CoatyModel
import Foundation
import Testing

/// The documented pattern: a task with a custom object type and one extra field.
final class HelloWorldTask: CoatyTask, @unchecked Sendable {
    override class var objectType: String { "com.helloworld.HelloWorldTask" }
    override class var propertyKeys: Set<String> { super.propertyKeys.union(["urgency"]) }
    let urgency: Int

    init(name: String, creatorID: ObjectID, urgency: Int, objectID: ObjectID = .random()) {
        self.urgency = urgency
        super.init(
            objectID: objectID,
            name: name,
            status: .request,
            creatorID: creatorID,
            creationTimestamp: 1_700_000_000_000
        )
    }

    required init(from decoder: any Decoder) throws {
        self.urgency = try decoder.decodeProperty("urgency")
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        try encoder.encodeProperty(self.urgency, forKey: "urgency")
    }
}

/// A subclass of another core type, with an optional object-valued field.
final class Thermometer: IOSource, @unchecked Sendable {
    override class var objectType: String { "com.example.Thermometer" }
    override class var propertyKeys: Set<String> { super.propertyKeys.union(["calibration"]) }
    let calibration: CoatyObject?

    init(name: String, calibration: CoatyObject?) {
        self.calibration = calibration
        super.init(name: name, valueType: "com.example.Temperature[Celsius]")
    }

    required init(from decoder: any Decoder) throws {
        self.calibration = try decoder.decodePropertyIfPresent("calibration")
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        try encoder.encodePropertyIfPresent(self.calibration, forKey: "calibration")
    }
}

struct SubclassingTests {
    @Test func taskSubclassIsATaskWithItsFieldsAndTheCustomObjectType() throws {
        let task = HelloWorldTask(name: "Greet", creatorID: "agent-1", urgency: 3)
        #expect(HelloWorldTask.coreType == .task && task.coreType == .task)
        let json = try AnyCodable(json: CoatyJSONEncoder().encode(task))
        #expect(json["objectType"] == "com.helloworld.HelloWorldTask")
        #expect(json["coreType"] == "Task")
        // The fields a Task promises are there, so agents without the class take it as a Task.
        #expect(json["status"] == 5 && json["creatorId"] == "agent-1" && json["creationTimestamp"] == 1_700_000_000_000)
        #expect(json["urgency"] == 3)

        let decoded = try ObjectFamily([HelloWorldTask.self]).decode(
            CoatyObject.self,
            from: CoatyJSONEncoder().encode(task)
        )
        let hello = try #require(decoded as? HelloWorldTask)
        #expect(hello.urgency == 3 && hello.status == .request && hello.creatorID == "agent-1")
        #expect(hello.customProperties.isEmpty)
        #expect(try AnyCodable(json: CoatyJSONEncoder().encode(hello)) == json)
    }

    @Test func unregisteredTaskSubclassFallsBackToCoatyTaskKeepingItsExtraField() throws {
        let bytes = try CoatyJSONEncoder().encode(HelloWorldTask(name: "Greet", creatorID: "agent-1", urgency: 3))
        let decoded = try ObjectFamily().decode(CoatyObject.self, from: bytes)
        let task = try #require(decoded as? CoatyTask)
        #expect(!(task is HelloWorldTask))
        #expect(task.objectType == "com.helloworld.HelloWorldTask" && task.status == .request)
        #expect(task.customProperties == ["urgency": 3])
        #expect(try AnyCodable(json: CoatyJSONEncoder().encode(task)) == AnyCodable(json: bytes))
    }

    @Test func subclassOfIOSourceKeepsItsObjectValuedField() throws {
        let calibration = CoatyObject(objectType: "com.example.Calibration", name: "2026")
        let source = Thermometer(name: "Hall", calibration: calibration)
        let bytes = try CoatyJSONEncoder().encode(source)
        let decoded = try #require(
            try ObjectFamily([Thermometer.self]).decode(CoatyObject.self, from: bytes) as? Thermometer
        )
        #expect(decoded.valueType == "com.example.Temperature[Celsius]" && decoded.coreType == .ioSource)
        #expect(decoded.calibration?.objectID == calibration.objectID)
        // Without the class: an IOSource with the calibration kept as a custom property.
        let fallback = try #require(try ObjectFamily().decode(CoatyObject.self, from: bytes) as? IOSource)
        #expect(fallback.customProperties["calibration"]?["name"] == "2026")
        // A JSON null for the optional field is refused, as coaty-js refuses null optionals.
        var json = try #require(try AnyCodable(json: bytes).objectValue)
        json["calibration"] = .null
        #expect(throws: DecodingError.self) {
            try ObjectFamily([Thermometer.self]).decode(
                CoatyObject.self,
                from: Array(AnyCodable.object(json).jsonString.utf8)
            )
        }
    }

    /// Minimal valid JSON of every core type, under an object type no family registers.
    static let unregisteredOfEveryCoreType: [(CoreType, String)] = [
        (.coatyObject, ""),
        (.user, #","names":{"formatted":"Ada"}"#),
        (.annotation, #","type":1,"creatorId":"c","creationTimestamp":1,"status":0"#),
        (.task, #","status":1,"creatorId":"c","creationTimestamp":1"#),
        (.ioContext, ""),
        (.ioNode, ""),
        (.ioSource, #","valueType":"t""#),
        (.ioActor, #","valueType":"t""#),
        (.identity, ""),
        (.log, #","logLevel":30,"logMessage":"m","logDate":"2026-01-01T00:00:00Z""#),
        (.location, #","geoLocation":{"coords":{"latitude":1,"longitude":2,"accuracy":3},"timestamp":1}"#),
        (
            .snapshot,
            #","parentObjectId":"o","creationTimestamp":1,"creatorId":"c","object":{"objectId":"o","name":"o","objectType":"x.T","coreType":"CoatyObject"}"#
        ),
    ]

    @Test(arguments: Self.unregisteredOfEveryCoreType)
    func unregisteredSubclassOfAnyCoreTypeFallsBackToThatCoreType(_ coreType: CoreType, _ fields: String) throws {
        let json =
            #"{"objectId":"x","name":"x","objectType":"com.example.Special","coreType":"\#(coreType.rawValue)","extra":[1,"two"]\#(fields)}"#
        let decoded = try ObjectFamily().decode(CoatyObject.self, from: bytes(json))
        #expect(ObjectIdentifier(type(of: decoded)) == ObjectIdentifier(ObjectFamily.fallbackClass(for: coreType)))
        #expect(decoded.objectType == "com.example.Special" && decoded.coreType == coreType)
        #expect(decoded.customProperties == ["extra": [1, "two"]])
        #expect(try AnyCodable(json: CoatyJSONEncoder().encode(decoded)) == AnyCodable(json: json))
    }
}
