import CoatyModel
import Foundation
import Testing

struct CapturedObjectTests {
    static let objects = (try? Fixtures.capturedObjects()) ?? []

    static let expectedClasses: [String: CoatyObject.Type] = [
        "coaty.Identity": Identity.self,
        "coaty.IoNode": IONode.self,
        "coaty.IoContext": IOContext.self,
        "coaty.Task": CoatyTask.self,
        "coaty.Log": Log.self,
        "com.example.Thing": CoatyObject.self,
        "com.example.Part": CoatyObject.self,
    ]

    @Test func captureHasObjects() {
        #expect(Self.objects.count >= 20)
    }

    @Test(arguments: Self.objects)
    func decodesToTheRightClassAndReencodesIdentically(_ captured: CapturedObject) throws {
        let decoder = CoatyJSONDecoder()
        let object = try decoder.decode(CoatyObject.self, fromValue: captured.json)
        let objectType = try #require(captured.json["objectType"]?.stringValue)
        let expected = try #require(Self.expectedClasses[objectType])
        #expect(ObjectIdentifier(type(of: object)) == ObjectIdentifier(expected))
        #expect(object.objectType == objectType)
        let reencoded = try AnyCodable(json: CoatyJSONEncoder().encode(object))
        #expect(reencoded == captured.json)
    }

    @Test(arguments: Self.objects)
    func decodesThroughJSONDecoderToo(_ captured: CapturedObject) throws {
        let data = try CoatyJSONEncoder().encode(captured.json)
        let decoder = JSONDecoder()
        decoder.userInfo = ObjectDecodingOptions().userInfo(family: ObjectFamily())
        let event = try decoder.decode(TestAdvertise.self, from: Data(#"{"object":"#.utf8) + data + Data("}".utf8))
        let reencoded = try AnyCodable(json: CoatyJSONEncoder().encode(event.object))
        #expect(reencoded == captured.json)
    }

    @Test func ioNodeHasTypedSourcesAndActors() throws {
        let captured = try #require(Self.objects.first { $0.json["objectType"] == "coaty.IoNode" })
        let node = try CoatyJSONDecoder().decode(IONode.self, fromValue: captured.json)
        let sources = try #require(node.ioSources)
        #expect(sources.count == 3)
        #expect(sources[0].updateStrategy == IOSourceUpdateStrategy.none)
        #expect(sources[1].useRawIoValues == true)
        #expect(sources[2].externalRoute == "external/golden/temp")
        #expect(node.ioActors?.first?.updateRate == 100)
        #expect(node.characteristics == ["site": "lab"])
    }

    @Test func customPropertiesOfAnUnregisteredTypeSurvive() throws {
        let captured = try #require(Self.objects.first { $0.json["objectType"] == "com.example.Thing" })
        let object = try CoatyJSONDecoder().decode(CoatyObject.self, fromValue: captured.json)
        #expect(object.customProperties == ["floor": 7])
        #expect(object.externalID == "ext-42")
    }

    @Test func logAndTaskFields() throws {
        let log = try CoatyJSONDecoder().decode(
            Log.self,
            fromValue: try #require(Self.objects.first { $0.json["objectType"] == "coaty.Log" }).json
        )
        #expect(log.logLevel == .info)
        #expect(log.logTags == ["golden", "test"])
        #expect(log.logHost?.pid == 20108)
        let task = try CoatyJSONDecoder().decode(
            CoatyTask.self,
            fromValue: try #require(Self.objects.first { $0.json["objectType"] == "coaty.Task" }).json
        )
        #expect(task.status == .pending)
        #expect(task.creationTimestamp == 1_700_000_000_000)
    }
}
