import CoatyCore
public import CoatyModel

/// IO value: a value an IO source publishes on its associating route, for the associated IO actors.
///
/// The payload is the JSON text of any JSON value, or raw bytes for sources and actors that use raw
/// IO values. There is no wrapper object.
public struct IOValueEvent: Sendable, Hashable {
    /// The route (topic) the value travels on: `coaty/3/<namespace>/IOV/<ioSourceID>` or an external route.
    public let route: String
    /// The payload bytes.
    public let payload: [UInt8]
    /// Where the event came from; `nil` for an event built locally.
    public internal(set) var origin: EventOrigin?

    /// Creates an IO value event carrying a JSON value.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidTopic`` if the route
    ///   is not a valid topic name; ``CommunicationError/Code/invalidEvent`` if the value cannot be encoded.
    public init(route: String, value: AnyCodable) throws {
        guard Self.isValidRoute(route) else { throw CommunicationError(.invalidTopic, "invalid IO route '\(route)'") }
        self.route = route
        self.payload = try EventCoding.encode(value)
    }

    /// Creates an IO value event carrying raw bytes.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidTopic`` if the route
    ///   is not a valid topic name.
    public init(route: String, bytes: [UInt8]) throws {
        guard Self.isValidRoute(route) else { throw CommunicationError(.invalidTopic, "invalid IO route '\(route)'") }
        self.route = route
        self.payload = bytes
    }

    init(received route: String, payload: [UInt8], origin: EventOrigin) {
        self.route = route
        self.payload = payload
        self.origin = origin
    }

    /// The payload parsed as JSON, or `nil` if it is not valid JSON (raw IO values).
    public var value: AnyCodable? {
        try? AnyCodable(json: self.payload)
    }

    /// Whether the payload parses as JSON.
    package var isJSON: Bool { self.value != nil }

    /// The Coaty IO route of an IO source: `coaty/3/<namespace>/IOV/<ioSourceID>`.
    public static func route(namespace: String, ioSourceID: ObjectID) -> String {
        CoatyTopic(namespace: namespace, code: .ioValue, sourceID: ioSourceID).formatted
    }

    /// Whether `route` can be published on (a valid MQTT topic name).
    public static func isValidRoute(_ route: String) -> Bool {
        TopicName.isValid(route)
    }
}

/// IO state: whether an IO source or actor is currently associated, and at which update rate.
///
/// Not a wire event: the manager derives it from the Associate events it observes.
public struct IOStateEvent: Sendable, Hashable {
    /// Whether the IO point has at least one association.
    public let hasAssociations: Bool
    /// The recommended update rate in milliseconds (the largest of the associations), if any; always
    /// `nil` for an IO actor, as in coaty-js.
    public let updateRate: Int?

    /// Creates an IO state.
    public init(hasAssociations: Bool, updateRate: Int? = nil) {
        self.hasAssociations = hasAssociations
        self.updateRate = updateRate
    }
}
