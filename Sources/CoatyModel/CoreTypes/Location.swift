/// A geographic location (`coaty.Location`), as reported by the W3C Geolocation API.
open class Location: CoatyObject, @unchecked Sendable {
    /// `coaty.Location`.
    override open class var objectType: String { CoreType.location.objectType }
    /// ``CoreType/location``.
    override public class var coreType: CoreType { .location }
    /// The location's own JSON keys.
    override open class var propertyKeys: Set<String> { Self.keys }
    private static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    /// The position and when it was taken.
    public let geoLocation: GeoLocation

    /// A position and when it was taken.
    public struct GeoLocation: Sendable, Hashable, Codable {
        /// The position.
        public var coords: Coordinates
        /// When it was taken, in milliseconds since the Unix epoch.
        public var timestamp: Double

        /// Creates a geolocation.
        public init(coords: Coordinates, timestamp: Double) {
            self.coords = coords
            self.timestamp = timestamp
        }

        private enum CodingKeys: String, CodingKey {
            case coords, timestamp
        }

        /// Decodes a geolocation.
        ///
        /// - Throws: `DecodingError` naming the missing or non-numeric field.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.coords = try container.decode(Coordinates.self, forKey: .coords)
            self.timestamp = try container.decode(Double.self, forKey: .timestamp)
        }

        /// Encodes a geolocation.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.coords, forKey: .coords)
            try container.encodeNumber(self.timestamp, forKey: .timestamp)
        }
    }

    /// Geographic coordinates (WGS 84).
    public struct Coordinates: Sendable, Hashable, Codable {
        /// Latitude in decimal degrees.
        public var latitude: Double
        /// Longitude in decimal degrees.
        public var longitude: Double
        /// Height in metres above the WGS 84 ellipsoid.
        public var altitude: Double?
        /// Accuracy of latitude and longitude, in metres.
        public var accuracy: Double
        /// Accuracy of the altitude, in metres.
        public var altitudeAccuracy: Double?
        /// Direction of travel in degrees clockwise from true north.
        public var heading: Double?
        /// Speed in metres per second.
        public var speed: Double?

        /// Creates coordinates.
        public init(
            latitude: Double,
            longitude: Double,
            accuracy: Double,
            altitude: Double? = nil,
            altitudeAccuracy: Double? = nil,
            heading: Double? = nil,
            speed: Double? = nil
        ) {
            self.latitude = latitude
            self.longitude = longitude
            self.accuracy = accuracy
            self.altitude = altitude
            self.altitudeAccuracy = altitudeAccuracy
            self.heading = heading
            self.speed = speed
        }

        private enum CodingKeys: String, CodingKey {
            case latitude, longitude, altitude, accuracy, altitudeAccuracy, heading, speed
        }

        /// Decodes coordinates.
        ///
        /// - Throws: `DecodingError` naming a missing, `null` or non-numeric field.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.latitude = try container.decode(Double.self, forKey: .latitude)
            self.longitude = try container.decode(Double.self, forKey: .longitude)
            self.accuracy = try container.decode(Double.self, forKey: .accuracy)
            self.altitude = try container.decodeStrictIfPresent(Double.self, forKey: .altitude)
            self.altitudeAccuracy = try container.decodeStrictIfPresent(Double.self, forKey: .altitudeAccuracy)
            self.heading = try container.decodeStrictIfPresent(Double.self, forKey: .heading)
            self.speed = try container.decodeStrictIfPresent(Double.self, forKey: .speed)
        }

        /// Encodes coordinates; absent optionals are omitted.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeNumber(self.latitude, forKey: .latitude)
            try container.encodeNumber(self.longitude, forKey: .longitude)
            try container.encodeNumberIfPresent(self.altitude, forKey: .altitude)
            try container.encodeNumber(self.accuracy, forKey: .accuracy)
            try container.encodeNumberIfPresent(self.altitudeAccuracy, forKey: .altitudeAccuracy)
            try container.encodeNumberIfPresent(self.heading, forKey: .heading)
            try container.encodeNumberIfPresent(self.speed, forKey: .speed)
        }
    }

    /// Creates a location.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type; defaults to `coaty.Location`.
    ///   - objectID: The identity; defaults to a new random UUID.
    ///   - name: A human-readable name.
    ///   - geoLocation: The position.
    ///   - externalID: An identity in an external system.
    ///   - parentObjectID: The object this one belongs to.
    ///   - locationID: The location of this object.
    ///   - isDeactivated: Whether the object is deactivated.
    ///   - customProperties: Extra properties.
    public init(
        objectType: String? = nil,
        objectID: ObjectID = .random(),
        name: String,
        geoLocation: GeoLocation,
        externalID: String? = nil,
        parentObjectID: ObjectID? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
        self.geoLocation = geoLocation
        super.init(
            objectType: objectType,
            objectID: objectID,
            name: name,
            externalID: externalID,
            parentObjectID: parentObjectID,
            locationID: locationID,
            isDeactivated: isDeactivated,
            customProperties: customProperties
        )
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case geoLocation
    }

    /// Decodes and validates a location as coaty-js does.
    ///
    /// - Throws: `DecodingError` naming the field: `geoLocation` missing, or a coordinate or the timestamp
    ///   missing or not a number, or any base-field error.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.geoLocation = try container.decode(GeoLocation.self, forKey: .geoLocation)
        try super.init(from: decoder)
    }

    /// Encodes the location.
    override open func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.geoLocation, forKey: .geoLocation)
    }
}
