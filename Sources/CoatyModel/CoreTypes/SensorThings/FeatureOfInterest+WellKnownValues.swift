extension FeatureOfInterest {
    /// Common values of ``FeatureOfInterest/encodingType`` (coaty-js `EncodingTypes`, which adds GeoJSON
    /// to the sensor encoding types), from the OGC SensorThings API, tables 7 and 15.
    public enum EncodingTypes {
        /// No encoding: the empty string (coaty-js `UNDEFINED`).
        public static let undefined = ""
        /// A PDF document.
        public static let pdf = "application/pdf"
        /// SensorML 2.0.
        public static let sensorML = "http://www.opengis.net/doc/IS/SensorML/2.0"
        /// GeoJSON, the usual encoding of a feature's `metadata`.
        public static let geoJSON = "application/vnd.geo+json"
    }
}
