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

    /// Decodes an interval and checks that it has one of the four forms, as coaty-js's `isTimeInterval` does.
    ///
    /// - Throws: `DecodingError` if a field is `null`, not a number or negative, if `start` and `end` come
    ///   with a `duration`, or if neither `duration` nor both `start` and `end` are given.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.start = try container.decodeNonNegativeIfPresent(forKey: .start)
        self.end = try container.decodeNonNegativeIfPresent(forKey: .end)
        self.duration = try container.decodeNonNegativeIfPresent(forKey: .duration)
        switch (self.start, self.end, self.duration) {
        case (.some, .some, nil), (_, nil, .some), (nil, .some, .some):
            break
        case (.some, .some, .some):
            throw container.invalid(.duration, "must not be given with both start and end")
        case (.some, nil, nil):
            throw container.invalid(.end, "or duration is required with start")
        case (nil, .some, nil):
            throw container.invalid(.start, "or duration is required with end")
        case (nil, nil, nil):
            throw container.invalid(.duration, "or start and end are required")
        }
    }

    /// Encodes an interval; absent fields are omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeNumberIfPresent(self.start, forKey: .start)
        try container.encodeNumberIfPresent(self.end, forKey: .end)
        try container.encodeNumberIfPresent(self.duration, forKey: .duration)
    }
}
