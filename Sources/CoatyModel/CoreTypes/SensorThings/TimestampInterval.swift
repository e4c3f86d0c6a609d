/// A time interval of the SensorThings objects (coaty-js `TimeInterval`), in milliseconds since the
/// Unix epoch: start and end, start and duration, duration and end, or duration only.
public struct TimestampInterval: Sendable, Hashable, Codable {
    /// The start, in milliseconds since the epoch.
    public var start: Double?
    /// The end, in milliseconds since the epoch.
    public var end: Double?
    /// The duration, in milliseconds.
    public var duration: Double?

    /// Creates an interval.
    public init(start: Double? = nil, end: Double? = nil, duration: Double? = nil) {
        self.start = start
        self.end = end
        self.duration = duration
    }

    private enum CodingKeys: String, CodingKey {
        case start, end, duration
    }

    /// Decodes an interval.
    ///
    /// - Throws: `DecodingError` if a field is `null` or not a number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.start = try container.decodeStrictIfPresent(Double.self, forKey: .start)
        self.end = try container.decodeStrictIfPresent(Double.self, forKey: .end)
        self.duration = try container.decodeStrictIfPresent(Double.self, forKey: .duration)
    }

    /// Encodes an interval; absent fields are omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeNumberIfPresent(self.start, forKey: .start)
        try container.encodeNumberIfPresent(self.end, forKey: .end)
        try container.encodeNumberIfPresent(self.duration, forKey: .duration)
    }
}
