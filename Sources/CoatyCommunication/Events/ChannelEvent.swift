public import CoatyModel

/// Channel: broadcasts one object or several objects to the observers of a channel.
public struct ChannelEvent: Sendable {
    /// The channel id, the event filter of the topic (`CHN:<channelID>`).
    public let channelID: String
    /// The object, when the event carries exactly one.
    public let object: CoatyObject?
    /// The objects, when the event carries an array (possibly empty).
    public let objects: [CoatyObject]?
    /// Application data.
    public let privateData: [String: AnyCodable]?
    /// Where the event came from; `nil` for an event built locally.
    public internal(set) var origin: EventOrigin?

    /// Creates a Channel event carrying one object.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   channel id is not a valid event filter.
    public init(channelID: String, object: CoatyObject, privateData: [String: AnyCodable]? = nil) throws {
        try EventValidation.checkFilterName(channelID, "channel id")
        self.channelID = channelID
        self.object = object
        self.objects = nil
        self.privateData = privateData
    }

    /// Creates a Channel event carrying an array of objects.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   channel id is not a valid event filter.
    public init(channelID: String, objects: [CoatyObject], privateData: [String: AnyCodable]? = nil) throws {
        try EventValidation.checkFilterName(channelID, "channel id")
        self.channelID = channelID
        self.object = nil
        self.objects = objects
        self.privateData = privateData
    }

    struct Payload: WirePayload {
        var object: CoatyObject?
        var objects: [CoatyObject]?
        var privateData: [String: AnyCodable]?

        enum CodingKeys: String, CodingKey { case object, objects, privateData }

        init(object: CoatyObject?, objects: [CoatyObject]?, privateData: [String: AnyCodable]?) {
            self.object = object
            self.objects = objects
            self.privateData = privateData
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let hasObject = container.contains(.object)
            let hasObjects = container.contains(.objects)
            guard hasObject != hasObjects else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: [], debugDescription: "exactly one of object and objects is required")
                )
            }
            self.object = hasObject ? try container.decodeObject(forKey: .object) : nil
            self.objects = hasObjects ? try container.decodeObjects(forKey: .objects) : nil
            self.privateData = try container.decodePrivateData(forKey: .privateData)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            if let object = self.object { try object.encodeObject(into: &container, forKey: .object) }
            if let objects = self.objects { try objects.encodeObjects(into: &container, forKey: .objects) }
            try container.encodeIfPresent(self.privateData, forKey: .privateData)
        }
    }

    var payload: Payload { Payload(object: self.object, objects: self.objects, privateData: self.privateData) }

    init(channelID: String, payload: Payload, origin: EventOrigin) {
        self.channelID = channelID
        self.object = payload.object
        self.objects = payload.objects
        self.privateData = payload.privateData
        self.origin = origin
    }
}
