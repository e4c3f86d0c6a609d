public import CoatyCore
public import CoatyModel

/// A Coaty topic: `coaty/<version>/<namespace>/<EVT>[:<filter>]/<sourceID>[/<correlationID>]`.
///
/// Formatting is strict (``formatted`` of a topic built by the manager is always valid); parsing
/// with ``init(parsing:)`` is lenient like coaty-js: extra levels are ignored, the version is not
/// checked, and any source id and correlation id is accepted, even an empty level.
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
    /// An empty source-id or correlation-id level is accepted, as coaty-js accepts it: the topic then
    /// has an empty ``sourceID`` or ``correlationID``, and a response to such a request goes to an
    /// empty correlation level (the manager reports both as diagnostics).
    ///
    /// Returns `nil` if the topic does not start with `coaty/`, has fewer than five levels, an
    /// unparsable version, an unknown event code, or (for two-way events) no sixth level. A broker
    /// never routes a topic with a missing level to a Coaty subscription: `+` matches an empty level,
    /// not a missing one.
    public init?(parsing topic: String) {
        // Works on the UTF-8 bytes with offsets: it runs for every inbound message, and `/` and `:`
        // are ASCII. Only the parts that are kept become strings.
        var text = topic
        guard
            let parsed = text.withUTF8({ bytes -> CoatyTopic? in
                Self.parse(bytes)
            })
        else { return nil }
        self = parsed
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> CoatyTopic? {
        guard Self.hasCoatyPrefix(bytes) else { return nil }
        // The levels after "coaty/", in order. A sixth level ends at the next `/`; anything after it
        // is ignored, as coaty-js ignores it.
        var levels = LevelReader(bytes: bytes, cursor: Self.prefix.utf8CodeUnitCount)
        // A level with a long run of combining marks would take quadratic time to hash or compare (see
        // `StreamSafeText`); the levels become strings the receiver may use as keys, so such a topic
        // does not parse. Levels shorter than the shortest violation (UUIDs) are not scanned.
        func string(_ part: UnsafeBufferPointer<UInt8>) -> String? {
            let text = String(decoding: part, as: UTF8.self)
            return StreamSafeText.isStreamSafe(text) ? text : nil
        }
        guard let versionLevel = levels.next(), let namespace = levels.next(), let event = levels.next(),
            let source = levels.next()
        else { return nil }

        let version: Int
        if versionLevel.count == 1, let digit = versionLevel.first, digit >= UInt8(ascii: "0"),
            digit <= UInt8(ascii: "9")
        {
            version = Int(digit - UInt8(ascii: "0"))
        } else {
            guard let parsed = string(versionLevel).flatMap({ Int($0) }) else { return nil }
            version = parsed
        }
        let code: UnsafeBufferPointer<UInt8>
        var filter: String?
        if let colon = event.firstIndex(of: UInt8(ascii: ":")) {
            code = UnsafeBufferPointer(rebasing: event[..<colon])
            guard let text = string(UnsafeBufferPointer(rebasing: event[(colon + 1)...])) else { return nil }
            filter = text
        } else {
            code = event
        }
        guard let eventCode = EventCode(bytes: code) else { return nil }
        var correlationID: ObjectID?
        if eventCode.isTwoWay {
            guard let correlation = levels.next(), let text = string(correlation) else { return nil }
            correlationID = ObjectID(text)
        }
        guard let namespaceText = string(namespace), let sourceText = string(source) else { return nil }
        return CoatyTopic(
            version: version,
            namespace: namespaceText,
            code: eventCode,
            filter: filter,
            sourceID: ObjectID(sourceText),
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
        Self.assemble(
            version: self.version,
            namespace: self.namespace,
            code: self.code,
            filter: self.filter,
            source: self.sourceID.rawValue,
            correlation: self.correlationID?.rawValue
        )
    }

    /// `coaty/<version>/<namespace>/<code>[:<filter>]/<source>[/<correlation>]`, written into one
    /// string of the right capacity: a topic is formatted for every publication and every response
    /// subscription, and interpolation grows its buffer piece by piece.
    private static func assemble(
        version: Int,
        namespace: String,
        code: EventCode,
        filter: String?,
        source: String,
        correlation: String?
    ) -> String {
        let versionText = String(version)
        var capacity =
            Self.prefix.utf8CodeUnitCount + versionText.utf8.count + 1 + namespace.utf8.count + 1 + 3 + 1
            + source.utf8.count
        if let filter { capacity += 1 + filter.utf8.count }
        if let correlation { capacity += 1 + correlation.utf8.count }
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var writer = TopicWriter(buffer: buffer)
            writer.put(Self.prefix)
            writer.put(versionText)
            writer.put(UInt8(ascii: "/"))
            writer.put(namespace)
            writer.put(UInt8(ascii: "/"))
            writer.put(code.rawValue)
            if let filter {
                writer.put(UInt8(ascii: ":"))
                writer.put(filter)
            }
            writer.put(UInt8(ascii: "/"))
            writer.put(source)
            if let correlation {
                writer.put(UInt8(ascii: "/"))
                writer.put(correlation)
            }
            return writer.count
        }
    }

    public var description: String { self.formatted }

    /// Whether `topic` looks like a Coaty topic (starts with `coaty/`).
    public static func isCoatyTopic(_ topic: String) -> Bool {
        var topic = topic
        return topic.withUTF8(Self.hasCoatyPrefix)
    }

    /// The first level of every Coaty topic, with its slash.
    private static let prefix: StaticString = "coaty/"

    /// Whether `bytes` start with `coaty/`. Compares bytes: every inbound message is checked, and the
    /// generic `starts(with:)` over a string's UTF-8 view took about as long as the rest of finding
    /// its observers.
    private static func hasCoatyPrefix(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        Self.prefix.withUTF8Buffer { prefix in
            bytes.count >= prefix.count && prefix.indices.allSatisfy { bytes[$0] == prefix[$0] }
        }
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
        let text = Self.assemble(
            version: Self.protocolVersion,
            namespace: namespace ?? "+",
            code: code,
            filter: filter,
            source: "+",
            correlation: code.isTwoWay ? (correlationID?.rawValue ?? "+") : nil
        )
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
        // Scanned as contiguous bytes: every request checks its correlation id with this.
        var name = name
        return name.withUTF8 { bytes in
            !bytes.isEmpty
                && !bytes.contains { byte in
                    byte == 0 || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "#") || byte == UInt8(ascii: "/")
                }
        }
    }

    /// The filter string for an Advertise or Update of objects of a core type (`"Task"`).
    public static func coreTypeFilter(_ coreType: CoreType) -> String { coreType.rawValue }

    /// The filter string for an Advertise or Update of objects of an object type (`":com.example.Thing"`).
    public static func objectTypeFilter(_ objectType: String) -> String { ":" + objectType }
}

/// Writes a topic's parts into a buffer of the right size. A value with mutating methods rather than
/// nested functions over a captured index: captured mutable state is checked for exclusive access at
/// run time, on every part of every topic.
private struct TopicWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    init(buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    mutating func put(_ part: String) {
        var part = part
        part.withUTF8 { self.put(bytes: $0) }
    }

    mutating func put(_ part: StaticString) {
        part.withUTF8Buffer { self.put(bytes: $0) }
    }

    private mutating func put(bytes: UnsafeBufferPointer<UInt8>) {
        _ = UnsafeMutableBufferPointer(rebasing: self.buffer[self.count..<(self.count + bytes.count)])
            .update(fromContentsOf: bytes)
        self.count += bytes.count
    }

    mutating func put(_ byte: UInt8) {
        self.buffer[self.count] = byte
        self.count += 1
    }
}

/// Reads a topic's levels one by one, as ``CoatyTopic/init(parsing:)`` needs them.
private struct LevelReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var cursor: Int

    /// The next level: up to the next `/` or the end. A level after the last one is `nil`.
    mutating func next() -> UnsafeBufferPointer<UInt8>? {
        guard self.cursor <= self.bytes.count else { return nil }
        var end = self.cursor
        while end < self.bytes.count, self.bytes[end] != UInt8(ascii: "/") { end += 1 }
        let level = UnsafeBufferPointer(rebasing: self.bytes[self.cursor..<end])
        self.cursor = end + 1
        return level
    }
}
