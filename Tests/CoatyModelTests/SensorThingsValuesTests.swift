import CoatyModel
import Testing

struct SensorThingsValuesTests {
    /// The constants are coaty-js's `SensorEncodingTypes`, `EncodingTypes` and `ObservationTypes`.
    @Test func constantsAreCoatyJSs() {
        let ogc = "http://www.opengis.net/def/observationType/OGC-OM/2.0/"
        #expect(Sensor.ObservationTypes.category == ogc + "OM_Category_Observation")
        #expect(Sensor.ObservationTypes.count == ogc + "OM_CountObservation")
        #expect(Sensor.ObservationTypes.measurement == ogc + "OM_Measurement")
        #expect(Sensor.ObservationTypes.any == ogc + "OM_Observation")
        #expect(Sensor.ObservationTypes.truth == ogc + "OM_TruthObservation")
        #expect(Sensor.EncodingTypes.undefined == "")
        #expect(Sensor.EncodingTypes.pdf == "application/pdf")
        #expect(Sensor.EncodingTypes.sensorML == "http://www.opengis.net/doc/IS/SensorML/2.0")
        #expect(FeatureOfInterest.EncodingTypes.geoJSON == "application/vnd.geo+json")
        #expect(FeatureOfInterest.EncodingTypes.pdf == Sensor.EncodingTypes.pdf)
        #expect(FeatureOfInterest.EncodingTypes.sensorML == Sensor.EncodingTypes.sensorML)
        #expect(FeatureOfInterest.EncodingTypes.undefined == "")
    }

    /// A sensor built with them is written with the literal strings.
    @Test func aSensorCarriesTheLiteralStrings() throws {
        let sensor = Sensor(
            objectID: "s1",
            name: "Thermometer",
            sensorDescription: "d",
            encodingType: Sensor.EncodingTypes.pdf,
            metadata: .string("http://example.com/t.pdf"),
            unitOfMeasurement: .init(name: "Degree Celsius", symbol: "degC"),
            observationType: Sensor.ObservationTypes.measurement,
            observedProperty: .init(name: "Temperature", definition: "http://d", description: "t")
        )
        let json = try AnyCodable(json: CoatyJSONEncoder().encode(sensor))
        #expect(json["encodingType"] == "application/pdf")
        #expect(json["observationType"] == "http://www.opengis.net/def/observationType/OGC-OM/2.0/OM_Measurement")
    }
}
