import CoatyModel
import Testing

/// One rule of COATY-PROTOCOL §2.3/§3 that coaty-js enforces, with the field the error must name.
struct RejectionCase: CustomTestStringConvertible, Sendable {
    let rule: String
    let json: String
    let field: String
    var testDescription: String { self.rule }
}

private let base = #""objectId":"4444","name":"n""#
private let task = #""objectType":"coaty.Task","coreType":"Task","creatorId":"c","creationTimestamp":1"#
private let sensor =
    #""objectType":"coaty.sensorThings.Sensor","coreType":"CoatyObject","description":"","encodingType":"","metadata":1,"observationType":"t""#
private let property = #"{"name":"t","definition":"","description":""}"#
private let observation =
    #""objectType":"coaty.sensorThings.Observation","coreType":"CoatyObject","phenomenonTime":1,"result":2,"resultTime":1"#

struct RejectionTests {
    static let rejected: [RejectionCase] = [
        .init(
            rule: "externalId null",
            json: #"{\#(base),"objectType":"x.T","coreType":"CoatyObject","externalId":null}"#,
            field: "externalId"
        ),
        .init(
            rule: "externalId empty",
            json: #"{\#(base),"objectType":"x.T","coreType":"CoatyObject","externalId":""}"#,
            field: "externalId"
        ),
        .init(
            rule: "parentObjectId empty",
            json: #"{\#(base),"objectType":"x.T","coreType":"CoatyObject","parentObjectId":""}"#,
            field: "parentObjectId"
        ),
        .init(
            rule: "locationId null",
            json: #"{\#(base),"objectType":"x.T","coreType":"CoatyObject","locationId":null}"#,
            field: "locationId"
        ),
        .init(
            rule: "isDeactivated not boolean",
            json: #"{\#(base),"objectType":"x.T","coreType":"CoatyObject","isDeactivated":"yes"}"#,
            field: "isDeactivated"
        ),
        .init(
            rule: "missing name",
            json: #"{"objectId":"1","objectType":"x.T","coreType":"CoatyObject"}"#,
            field: "name"
        ),
        .init(
            rule: "name not a string",
            json: #"{"objectId":"1","name":5,"objectType":"x.T","coreType":"CoatyObject"}"#,
            field: "name"
        ),
        .init(rule: "unknown coreType", json: #"{\#(base),"objectType":"x.T","coreType":"Foo"}"#, field: "coreType"),
        .init(rule: "missing coreType", json: #"{\#(base),"objectType":"x.T"}"#, field: "coreType"),
        .init(
            rule: "coaty.Task with coreType User is validated as a User",
            json: #"{\#(base),"objectType":"coaty.Task","coreType":"User"}"#,
            field: "names"
        ),
        .init(
            rule: "empty objectType",
            json: #"{\#(base),"objectType":"","coreType":"CoatyObject"}"#,
            field: "objectType"
        ),
        .init(rule: "missing objectType", json: #"{\#(base),"coreType":"CoatyObject"}"#, field: "objectType"),
        .init(
            rule: "empty objectId",
            json: #"{"objectId":"","name":"n","objectType":"x.T","coreType":"CoatyObject"}"#,
            field: "objectId"
        ),
        .init(
            rule: "missing objectId",
            json: #"{"name":"n","objectType":"x.T","coreType":"CoatyObject"}"#,
            field: "objectId"
        ),
        .init(rule: "Task without status", json: #"{\#(base),\#(task)}"#, field: "status"),
        .init(rule: "Task status out of range", json: #"{\#(base),\#(task),"status":7}"#, field: "status"),
        .init(
            rule: "Task creatorId empty",
            json:
                #"{\#(base),"objectType":"coaty.Task","coreType":"Task","creatorId":"","creationTimestamp":1,"status":0}"#,
            field: "creatorId"
        ),
        .init(
            rule: "Task creationTimestamp not a number",
            json:
                #"{\#(base),"objectType":"coaty.Task","coreType":"Task","creatorId":"c","creationTimestamp":"now","status":0}"#,
            field: "creationTimestamp"
        ),
        .init(
            rule: "Task requirements not an object",
            json: #"{\#(base),\#(task),"status":0,"requirements":[1]}"#,
            field: "requirements"
        ),
        .init(
            rule: "Task assigneeObjectId empty",
            json: #"{\#(base),\#(task),"status":0,"assigneeObjectId":""}"#,
            field: "assigneeObjectId"
        ),
        .init(
            rule: "Task description null",
            json: #"{\#(base),\#(task),"status":0,"description":null}"#,
            field: "description"
        ),
        .init(
            rule: "unknown objectType with coreType Task falls back and still needs status",
            json: #"{\#(base),"objectType":"com.x.Job","coreType":"Task","creatorId":"c","creationTimestamp":1}"#,
            field: "status"
        ),
        .init(
            rule: "Annotation type out of range",
            json:
                #"{\#(base),"objectType":"coaty.Annotation","coreType":"Annotation","type":8,"creatorId":"c","creationTimestamp":1,"status":0}"#,
            field: "type"
        ),
        .init(
            rule: "Annotation variant empty",
            json:
                #"{\#(base),"objectType":"coaty.Annotation","coreType":"Annotation","type":1,"creatorId":"c","creationTimestamp":1,"status":0,"variants":[{"variant":"","downloadUrl":"u"}]}"#,
            field: "variant"
        ),
        .init(
            rule: "Log level not 10..50",
            json: #"{\#(base),"objectType":"coaty.Log","coreType":"Log","logLevel":15,"logMessage":"m","logDate":"d"}"#,
            field: "logLevel"
        ),
        .init(
            rule: "Log without logDate",
            json: #"{\#(base),"objectType":"coaty.Log","coreType":"Log","logLevel":10,"logMessage":"m"}"#,
            field: "logDate"
        ),
        .init(
            rule: "Log tag empty",
            json:
                #"{\#(base),"objectType":"coaty.Log","coreType":"Log","logLevel":10,"logMessage":"m","logDate":"d","logTags":["a",""]}"#,
            field: "logTags"
        ),
        .init(
            rule: "Log agentInfo incomplete",
            json:
                #"{\#(base),"objectType":"coaty.Log","coreType":"Log","logLevel":10,"logMessage":"m","logDate":"d","logHost":{"agentInfo":{"packageInfo":{"name":"a"},"buildInfo":{"buildDate":"b","buildMode":"m"},"configInfo":{"serviceHost":"h"}}}}"#,
            field: "packageInfo"
        ),
        .init(
            rule: "IoSource valueType empty",
            json: #"{\#(base),"objectType":"coaty.IoSource","coreType":"IoSource","valueType":""}"#,
            field: "valueType"
        ),
        .init(
            rule: "IoSource updateRate negative",
            json: #"{\#(base),"objectType":"coaty.IoSource","coreType":"IoSource","valueType":"v","updateRate":-1}"#,
            field: "updateRate"
        ),
        .init(
            rule: "IoSource updateStrategy out of range",
            json: #"{\#(base),"objectType":"coaty.IoSource","coreType":"IoSource","valueType":"v","updateStrategy":4}"#,
            field: "updateStrategy"
        ),
        .init(
            rule: "IoActor without valueType",
            json: #"{\#(base),"objectType":"coaty.IoActor","coreType":"IoActor"}"#,
            field: "valueType"
        ),
        .init(
            rule: "IoNode with an actor among its sources",
            json:
                #"{\#(base),"objectType":"coaty.IoNode","coreType":"IoNode","ioSources":[{"objectId":"a","name":"a","objectType":"coaty.IoActor","coreType":"IoActor","valueType":"v"}]}"#,
            field: "[0]"
        ),
        .init(
            rule: "IoNode characteristics not an object",
            json: #"{\#(base),"objectType":"coaty.IoNode","coreType":"IoNode","characteristics":"x"}"#,
            field: "characteristics"
        ),
        .init(
            rule: "Location without accuracy",
            json:
                #"{\#(base),"objectType":"coaty.Location","coreType":"Location","geoLocation":{"timestamp":1,"coords":{"latitude":1,"longitude":2}}}"#,
            field: "accuracy"
        ),
        .init(
            rule: "Snapshot without parentObjectId",
            json:
                #"{\#(base),"objectType":"coaty.Snapshot","coreType":"Snapshot","creationTimestamp":1,"creatorId":"c","object":{"objectId":"o","name":"o","objectType":"coaty.Identity","coreType":"Identity"}}"#,
            field: "parentObjectId"
        ),
        .init(
            rule: "Snapshot creationTimestamp zero",
            json:
                #"{\#(base),"parentObjectId":"o","objectType":"coaty.Snapshot","coreType":"Snapshot","creationTimestamp":0,"creatorId":"c","object":{"objectId":"o","name":"o","objectType":"coaty.Identity","coreType":"Identity"}}"#,
            field: "creationTimestamp"
        ),
        .init(
            rule: "Snapshot object invalid",
            json:
                #"{\#(base),"parentObjectId":"o","objectType":"coaty.Snapshot","coreType":"Snapshot","creationTimestamp":1,"creatorId":"c","object":{"objectId":"o","objectType":"coaty.Identity","coreType":"Identity"}}"#,
            field: "name"
        ),
        .init(
            rule: "User without names",
            json: #"{\#(base),"objectType":"coaty.User","coreType":"User"}"#,
            field: "names"
        ),
        .init(
            rule: "User familyName without givenName",
            json: #"{\#(base),"objectType":"coaty.User","coreType":"User","names":{"familyName":"Doe"}}"#,
            field: "familyName"
        ),
        .init(
            rule: "Observation validTime without start, end or duration",
            json: #"{\#(base),\#(observation),"validTime":{}}"#,
            field: "duration"
        ),
        .init(
            rule: "Observation validTime with start only",
            json: #"{\#(base),\#(observation),"validTime":{"start":1}}"#,
            field: "end"
        ),
        .init(
            rule: "Observation validTime with start, end and duration",
            json: #"{\#(base),\#(observation),"validTime":{"start":1,"end":2,"duration":1}}"#,
            field: "duration"
        ),
        .init(
            rule: "Observation validTime with end only",
            json: #"{\#(base),\#(observation),"validTime":{"end":2}}"#,
            field: "start"
        ),
        .init(
            rule: "Observation validTime with negative duration",
            json: #"{\#(base),\#(observation),"validTime":{"duration":-1}}"#,
            field: "duration"
        ),
        .init(
            rule: "Observation validTime with negative start",
            json: #"{\#(base),\#(observation),"validTime":{"start":-1,"end":2}}"#,
            field: "start"
        ),
        .init(
            rule: "Observation phenomenonTime negative",
            json:
                #"{\#(base),"objectType":"coaty.sensorThings.Observation","coreType":"CoatyObject","phenomenonTime":-1,"result":2,"resultTime":1}"#,
            field: "phenomenonTime"
        ),
        .init(
            rule: "Observation resultTime negative",
            json:
                #"{\#(base),"objectType":"coaty.sensorThings.Observation","coreType":"CoatyObject","phenomenonTime":1,"result":2,"resultTime":-1}"#,
            field: "resultTime"
        ),
        .init(
            rule: "Observation without result",
            json:
                #"{\#(base),"objectType":"coaty.sensorThings.Observation","coreType":"CoatyObject","phenomenonTime":1,"resultTime":1}"#,
            field: "result"
        ),
        .init(
            rule: "Sensor without observedProperty",
            json: #"{\#(base),\#(sensor),"unitOfMeasurement":{}}"#,
            field: "observedProperty"
        ),
        .init(
            rule: "Observation resultQuality with an empty string",
            json: #"{\#(base),\#(observation),"resultQuality":["ok",""]}"#,
            field: "resultQuality"
        ),
        .init(
            rule: "Sensor observedProperty name empty",
            json:
                #"{\#(base),\#(sensor),"unitOfMeasurement":{},"observedProperty":{"name":"","definition":"","description":""}}"#,
            field: "name"
        ),
        .init(
            rule: "Sensor unitOfMeasurement symbol null",
            json: #"{\#(base),\#(sensor),"unitOfMeasurement":{"symbol":null},"observedProperty":\#(property)}"#,
            field: "symbol"
        ),
        .init(
            rule: "Sensor observedArea not an object",
            json: #"{\#(base),\#(sensor),"unitOfMeasurement":{},"observedProperty":\#(property),"observedArea":[1]}"#,
            field: "observedArea"
        ),
        .init(
            rule: "Thing locations with an empty string",
            json:
                #"{\#(base),"objectType":"coaty.sensorThings.Thing","coreType":"CoatyObject","description":"d","locations":["l",""]}"#,
            field: "locations"
        ),
        .init(
            rule: "User formatted empty",
            json: #"{\#(base),"objectType":"coaty.User","coreType":"User","names":{"formatted":""}}"#,
            field: "formatted"
        ),
        .init(
            rule: "User role empty",
            json: #"{\#(base),"objectType":"coaty.User","coreType":"User","names":{"formatted":"J"},"roles":[""]}"#,
            field: "roles"
        ),
        .init(
            rule: "User email without value",
            json:
                #"{\#(base),"objectType":"coaty.User","coreType":"User","names":{"formatted":"J"},"emails":[{"type":"work"}]}"#,
            field: "value"
        ),
        .init(rule: "object is not a JSON object", json: #"[1]"#, field: ""),
    ]

    @Test(arguments: Self.rejected)
    func rejects(_ rule: RejectionCase) throws {
        do {
            let object = try ObjectFamily().decode(CoatyObject.self, from: bytes(rule.json))
            Issue.record("accepted \(object.objectType): \(rule.json)")
        } catch let error as DecodingError {
            let path = codingPath(of: error)
            if rule.field.isEmpty {
                #expect(path.isEmpty)
            } else {
                #expect(path.last == rule.field, "path \(path) should end in \(rule.field): \(error)")
            }
            #expect(!"\(error)".isEmpty)
        }
    }

    static let accepted: [RejectionCase] = [
        .init(
            rule: "non-UUID objectId",
            json: #"{"objectId":"o1","name":"n","objectType":"x.T","coreType":"CoatyObject"}"#,
            field: ""
        ),
        .init(
            rule: "upper-case UUID kept verbatim",
            json:
                #"{"objectId":"AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA","name":"","objectType":"x.T","coreType":"CoatyObject"}"#,
            field: ""
        ),
        .init(
            rule: "empty name",
            json: #"{"objectId":"o1","name":"","objectType":"x.T","coreType":"CoatyObject"}"#,
            field: ""
        ),
        .init(
            rule: "objectType with slash (event layer checks filters)",
            json: #"{"objectId":"o1","name":"n","objectType":"com.x/T","coreType":"CoatyObject"}"#,
            field: ""
        ),
        .init(
            rule: "User with family and given names",
            json:
                #"{"objectId":"u","name":"jd","objectType":"coaty.User","coreType":"User","names":{"familyName":"Doe","givenName":"J"},"emails":[{"type":"work","value":"j@x.org","primary":true}]}"#,
            field: ""
        ),
        .init(
            rule: "Snapshot",
            json:
                #"{"objectId":"s","name":"s","parentObjectId":"o","objectType":"coaty.Snapshot","coreType":"Snapshot","creationTimestamp":1.5,"creatorId":"c","tags":["t"],"object":{"objectId":"o","name":"o","objectType":"com.x.T","coreType":"Task","creatorId":"c","creationTimestamp":1,"status":2,"extra":[1,2.5,null]}}"#,
            field: ""
        ),
        .init(
            rule: "Location",
            json:
                #"{"objectId":"l","name":"l","objectType":"coaty.Location","coreType":"Location","geoLocation":{"timestamp":1,"coords":{"latitude":48.1,"longitude":11.5,"accuracy":3,"heading":90}}}"#,
            field: ""
        ),
        .init(
            rule: "Annotation with variants",
            json:
                #"{"objectId":"a","name":"a","objectType":"coaty.Annotation","coreType":"Annotation","type":6,"creatorId":"c","creationTimestamp":1,"status":3,"variants":[{"variant":"hd","downloadUrl":"http://x/y"}]}"#,
            field: ""
        ),
        .init(
            rule: "Log with agent info",
            json:
                #"{"objectId":"g","name":"g","objectType":"coaty.Log","coreType":"Log","logLevel":50,"logMessage":"m","logDate":"2020-01-01T00:00:00Z","logLabels":{"a":1},"logHost":{"hostname":"h","agentInfo":{"packageInfo":{"name":"a","version":"1","extra":true},"buildInfo":{"buildDate":"b","buildMode":"m"},"configInfo":{"serviceHost":"h"}}}}"#,
            field: ""
        ),
        .init(
            rule: "SensorThings Sensor",
            json:
                #"{"objectId":"s","name":"s","objectType":"coaty.sensorThings.Sensor","coreType":"CoatyObject","description":"d","encodingType":"application/pdf","metadata":"http://x/m.pdf","unitOfMeasurement":{"name":"Degree Celsius","symbol":"degC","definition":"http://u"},"observationType":"http://www.opengis.net/def/observationType/OGC-OM/2.0/OM_Measurement","observedProperty":{"name":"t","definition":"http://d","description":"temp"},"phenomenonTime":{"start":1,"end":2}}"#,
            field: ""
        ),
        .init(
            rule: "SensorThings Observation",
            json:
                #"{"objectId":"o","name":"o","objectType":"coaty.sensorThings.Observation","coreType":"CoatyObject","phenomenonTime":1,"result":22.5,"resultTime":2,"featureOfInterestId":"f","parameters":{"p":1}}"#,
            field: ""
        ),
        .init(
            rule: "SensorThings Observation with each valid form of validTime",
            json:
                #"{"objectId":"o","name":"o","objectType":"coaty.sensorThings.Observation","coreType":"CoatyObject","phenomenonTime":1,"result":null,"resultTime":2,"validTime":{"duration":0},"x":[{"objectId":"a","name":"a","objectType":"coaty.sensorThings.Observation","coreType":"CoatyObject","phenomenonTime":1,"result":1,"resultTime":2,"validTime":{"start":0,"duration":5}}]}"#,
            field: ""
        ),
        .init(
            rule: "SensorThings Sensor with an end-and-duration interval",
            json:
                #"{"objectId":"s","name":"s","objectType":"coaty.sensorThings.Sensor","coreType":"CoatyObject","description":"d","encodingType":"","metadata":null,"unitOfMeasurement":{},"observationType":"t","observedProperty":{"name":"t","definition":"","description":""},"phenomenonTime":{"end":1,"duration":1},"resultTime":{"start":1,"end":1}}"#,
            field: ""
        ),
        .init(
            rule: "SensorThings Thing and FeatureOfInterest",
            json:
                #"{"objectId":"t","name":"t","objectType":"coaty.sensorThings.Thing","coreType":"CoatyObject","description":"d","properties":{"k":"v"}}"#,
            field: ""
        ),
        .init(
            rule: "SensorThings Thing with locations, kept as a custom property",
            json:
                #"{"objectId":"t","name":"t","objectType":"coaty.sensorThings.Thing","coreType":"CoatyObject","description":"d","locations":["l1"]}"#,
            field: ""
        ),
        .init(
            rule: "SensorThings FeatureOfInterest",
            json:
                #"{"objectId":"f","name":"f","objectType":"coaty.sensorThings.FeatureOfInterest","coreType":"CoatyObject","description":"d","encodingType":"application/vnd.geo+json","metadata":{"type":"Point","coordinates":[1,2]}}"#,
            field: ""
        ),
    ]

    @Test(arguments: Self.accepted)
    func acceptsAndRoundTrips(_ rule: RejectionCase) throws {
        let json = try AnyCodable(json: rule.json)
        let object = try CoatyJSONDecoder().decode(CoatyObject.self, fromValue: json)
        #expect(try AnyCodable(json: CoatyJSONEncoder().encode(object)) == json)
    }

    @Test func sensorThingsDecodeToTheirClasses() throws {
        let family = ObjectFamily()
        for rule in Self.accepted where rule.rule.hasPrefix("SensorThings") {
            let object = try family.decode(CoatyObject.self, from: bytes(rule.json))
            #expect(object is Thing || object is Sensor || object is SensorObservation || object is FeatureOfInterest)
        }
    }
}
