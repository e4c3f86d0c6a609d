public import CoatyCore
public import CoatyModel

/// A Coaty topic: `coaty/<version>/<namespace>/<EVT>[:<filter>]/<sourceID>[/<correlationID>]`.
///
/// Formatting is strict (``formatted`` of a topic built by the manager is always valid); parsing
/// with ``init(parsing:)`` is lenient like coaty-js: extra levels are ignored, the version is not
/// checked and any non-empty source id is accepted.
public struct CoatyTopic: Sendable, Hashable, CustomStringConvertible {
    /// The protocol name, the first topic level.
    public static let protocolName = "coaty"
    /// The Coaty MQTT communication protocol version this implementation speaks.
    public static let protocolVersion = 3
    /// The namespace used when none is configured.
    public static let defaultNamespace = "-"

    /// The protocol version of the publisher.
    public var version: Int
    /// The namespace.
    public var namespace: String
    /// The event code.
    public var code: EventCode
    /// The event filter after the `:` separator, if any (for an object-type filter this starts with `:`).
    public var filter: String?
    /// The publisher's identity id (for IO values: the IO source id).
    public var sourceID: ObjectID
    /// The correlation id of a two-way event.
    public var correlationID: ObjectID?

    /// Creates a topic.
    public init(
        version: Int = CoatyTopic.protocolVersion,
        namespace: String,
        code: EventCode,
        filter: String? = nil,
        sourceID: ObjectID,
        correlationID: ObjectID? = nil
    ) {
        self.version = version
        self.namespace = namespace
        self.code = code
        self.filter = filter
        self.sourceID = sourceID
        self.correlationID = correlationID
    }

    /// Parses a topic name leniently, as coaty-js does.
    ///
    /// Returns `nil` if the topic does not start with `coaty/`, has fewer than five levels, an
    /// unparsable version, an unknown event code, an empty source id, or (for two-way events) no
    /// correlation id.
    public init?(parsing topic: String) {
        // Works on the UTF-8 view: it runs for every inbound message, and `/` and `:` are ASCII.
        let utf8 = topic.utf8
        guard utf8.starts(with: "coaty/".utf8) else { return nil }
        var levels: [Substring] = []
        levels.reserveCapacity(6)
        var levelStart = utf8.startIndex
        var index = levelStart
        while index != utf8.endIndex, levels.count < 6 {
            if utf8[index] == UInt8(ascii: "/") {
                levels.append(topic[levelStart..<index])
                levelStart = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        if levels.count < 6 {
            levels.append(topic[levelStart...])
        }
        guard levels.count >= 5, let version = Int(levels[1]) else { return nil }
        let event = levels[3]
        let code: Substring
        let filter: String?
        if let colon = event.utf8.firstIndex(of: UInt8(ascii: ":")) {
            code = event[..<colon]
            filter = String(event[event.utf8.index(after: colon)...])
        } else {
            code = event
            filter = nil
        }
        guard let eventCode = EventCode(rawValue: String(code)), !levels[4].isEmpty else { return nil }
        var correlationID: ObjectID?
        if eventCode.isTwoWay {
            guard levels.count >= 6, !levels[5].isEmpty else { return nil }
            correlationID = ObjectID(String(levels[5]))
        }
        self.init(
            version: version,
            namespace: String(levels[2]),
            code: eventCode,
            filter: filter,
            sourceID: ObjectID(String(levels[4])),
            correlationID: correlationID
        )
    }

    /// The event level: the code, and `:` plus the filter if there is one.
    public var eventLevel: String {
        guard let filter = self.filter else { return self.code.rawValue }
        return self.code.rawValue + ":" + filter
    }

    /// The topic name.
    public var formatted: String {
        var topic =
            "\(Self.protocolName)/\(self.version)/\(self.namespace)/\(self.eventLevel)/\(self.sourceID.rawValue)"
        if let correlationID = self.correlationID { topic += "/" + correlationID.rawValue }
        return topic
    }

    public var description: String { self.formatted }

    /// Whether `topic` looks like a Coaty topic (starts with `coaty/`).
    public static func isCoatyTopic(_ topic: String) -> Bool {
        topic.utf8.starts(with: "coaty/".utf8)
    }

    /// The subscription filter for events of `code`, as coaty-js builds it (protocol §1.4).
    ///
    /// - Parameters:
    ///   - code: The event code.
    ///   - filter: The event filter (a core type, `:` + object type, channel id, operation or context name).
    ///   - namespace: The namespace, or `nil` for every namespace (cross-namespacing: `+`).
    ///   - correlationID: For responses, the request's correlation id; otherwise `nil` (`+`).
    /// - Returns: The topic filter.
    public static func subscriptionFilter(
        _ code: EventCode,
        filter: String? = nil,
        namespace: String?,
        correlationID: ObjectID? = nil
    ) -> TopicFilter {
        let event = filter.map { code.rawValue + ":" + $0 } ?? code.rawValue
        var text = "\(Self.protocolName)/\(Self.protocolVersion)/\(namespace ?? "+")/\(event)/+"
        if code.isTwoWay { text += "/" + (correlationID?.rawValue ?? "+") }
        // Every part has been validated as an event filter, so this cannot fail; fall back to a
        // filter that matches nothing we publish rather than trapping.
        return (try? TopicFilter(text)) ?? Self.unmatchable
    }

    static let unmatchable: TopicFilter = {
        // "coaty/-" cannot be a Coaty event topic (too few levels).
        guard let filter = try? TopicFilter("coaty/-") else { preconditionFailure("constant filter") }
        return filter
    }()

    /// Whether `name` is a valid event filter, namespace, object type, channel id, operation or IO
    /// context name: non-empty, without U+0000, `+`, `#` or `/` (coaty-js `isValidEventFilter`).
    public static func isValidEventFilter(_ name: String) -> Bool {
        guard !name.isEmpty else { return false }
        for byte in name.utf8
        where byte == 0 || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "#")
            || byte == UInt8(ascii: "/")
        {
            return false
        }
        return true
    }

    /// The filter string for an Advertise or Update of objects of a core type (`"Task"`).
    public static func coreTypeFilter(_ coreType: CoreType) -> String { coreType.rawValue }

    /// The filter string for an Advertise or Update of objects of an object type (`":com.example.Thing"`).
    public static func objectTypeFilter(_ objectType: String) -> String { ":" + objectType }
}
