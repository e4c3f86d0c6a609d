public import CoatyModel

/// Advertise: announces a new or changed object to every interested agent.
///
/// Published on `ADV:<CoreType>`, and in addition on `ADV::<objectType>` when the object type is not
/// the canonical `coaty.<CoreType>`.
public struct AdvertiseEvent: Sendable {
    /// The advertised object.
    public let object: CoatyObject
    /// Application data that is not part of the object.
    public let privateData: [String: AnyCodable]?
    /// Where the event came from; `nil` for an event built locally.
    public internal(set) var origin: EventOrigin?

    /// Creates an Advertise event.
    ///
    /// - Parameters:
    ///   - object: The object to advertise.
    ///   - privateData: Application data that is not part of the object.
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   object type is not a valid event filter (empty, or contains `/`, `+`, `#` or U+0000).
    public init(_ object: CoatyObject, privateData: [String: AnyCodable]? = nil) throws {
        try EventValidation.checkObjectType(object)
        self.object = object
        self.privateData = privateData
    }

    struct Payload: WirePayload {
        var object: CoatyObject
        var privateData: [String: AnyCodable]?

        enum CodingKeys: String, CodingKey { case object, privateData }

        init(object: CoatyObject, privateData: [String: AnyCodable]?) {
            self.object = object
            self.privateData = privateData
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.object = try container.decodeObject(forKey: .object)
            self.privateData = try container.decodePrivateData(forKey: .privateData)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try self.object.encodeObject(into: &container, forKey: .object)
            try container.encodeIfPresent(self.privateData, forKey: .privateData)
        }
    }

    var payload: Payload { Payload(object: self.object, privateData: self.privateData) }

    init(payload: Payload, origin: EventOrigin) throws(CommunicationError) {
        guard CoatyTopic.isValidEventFilter(payload.object.objectType) else {
            throw .invalid("objectType '\(payload.object.objectType)' is not a valid event filter")
        }
        self.object = payload.object
        self.privateData = payload.privateData
        self.origin = origin
    }
}
