extension Sensor {
    /// Common values of ``Sensor/encodingType`` (coaty-js `SensorEncodingTypes`), from the OGC
    /// SensorThings API, table 15.
    public enum EncodingTypes {
        /// No encoding: the empty string (coaty-js `UNDEFINED`).
        public static let undefined = ""
        /// A PDF data sheet.
        public static let pdf = "application/pdf"
        /// SensorML 2.0.
        public static let sensorML = "http://www.opengis.net/doc/IS/SensorML/2.0"
    }

    /// Common values of ``Sensor/observationType`` (coaty-js `ObservationTypes`), from the OGC
    /// SensorThings API, table 12; each names the JSON type of the observations' `result`.
    public enum ObservationTypes {
        /// Results are URLs (`OM_Category_Observation`).
        public static let category = "http://www.opengis.net/def/observationType/OGC-OM/2.0/OM_Category_Observation"
        /// Results are integers (`OM_CountObservation`).
        public static let count = "http://www.opengis.net/def/observationType/OGC-OM/2.0/OM_CountObservation"
        /// Results are doubles (`OM_Measurement`).
        public static let measurement = "http://www.opengis.net/def/observationType/OGC-OM/2.0/OM_Measurement"
        /// Results are any JSON value (`OM_Observation`).
        public static let any = "http://www.opengis.net/def/observationType/OGC-OM/2.0/OM_Observation"
        /// Results are booleans (`OM_TruthObservation`).
        public static let truth = "http://www.opengis.net/def/observationType/OGC-OM/2.0/OM_TruthObservation"
    }
}
