public import CoatyModel

/// Resolve: an agent's answer to a ``DiscoverEvent``.
public struct ResolveEvent: Sendable {
    /// The resolved object.
    public let object: CoatyObject?
    /// Objects related to the resolved one.
    public let relatedObjects: [CoatyObject]?
    /// Application data.
    public let privateData: [String: AnyCodable]?
    /// Where the event came from; `nil` for an event built locally.
    public internal(set) var origin: EventOrigin?

    /// Creates a Resolve event with an object and, optionally, related objects.
    public init(object: CoatyObject, relatedObjects: [CoatyObject]? = nil, privateData: [String: AnyCodable]? = nil) {
        self.object = object
        self.relatedObjects = relatedObjects
        self.privateData = privateData
    }

    /// Creates a Resolve event with related objects only.
    public init(relatedObjects: [CoatyObject], privateData: [String: AnyCodable]? = nil) {
        self.object = nil
        self.relatedObjects = relatedObjects
        self.privateData = privateData
    }

    struct Payload: WirePayload {
        var object: CoatyObject?
        var relatedObjects: [CoatyObject]?
        var privateData: [String: AnyCodable]?

        enum CodingKeys: String, CodingKey { case object, relatedObjects, privateData }

        init(object: CoatyObject?, relatedObjects: [CoatyObject]?, privateData: [String: AnyCodable]?) {
            self.object = object
            self.relatedObjects = relatedObjects
            self.privateData = privateData
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.object = container.contains(.object) ? try container.decodeObject(forKey: .object) : nil
            self.relatedObjects =
                container.contains(.relatedObjects) ? try container.decodeObjects(forKey: .relatedObjects) : nil
            self.privateData = try container.decodePrivateData(forKey: .privateData)
            if self.object == nil && self.relatedObjects == nil {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: [], debugDescription: "a Resolve needs object or relatedObjects")
                )
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            if let object = self.object { try object.encodeObject(into: &container, forKey: .object) }
            if let related = self.relatedObjects {
                try related.encodeObjects(into: &container, forKey: .relatedObjects)
            }
            try container.encodeIfPresent(self.privateData, forKey: .privateData)
        }
    }

    var payload: Payload {
        Payload(object: self.object, relatedObjects: self.relatedObjects, privateData: self.privateData)
    }

    init(payload: Payload, origin: EventOrigin) {
        self.object = payload.object
        self.relatedObjects = payload.relatedObjects
        self.privateData = payload.privateData
        self.origin = origin
    }
}
