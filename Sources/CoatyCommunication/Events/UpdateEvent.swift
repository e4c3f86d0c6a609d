public import CoatyModel

/// Update: asks the owner of an object to change it; answered by ``CompleteEvent``s.
///
/// Published on `UPD:<CoreType>`, and also on `UPD::<objectType>` (with its own correlation id) when
/// the object type is not the canonical `coaty.<CoreType>`.
public struct UpdateEvent: Sendable {
    /// The object with the requested changes.
    public let object: CoatyObject
    /// Where the event came from; `nil` for an event built locally.
    public internal(set) var origin: EventOrigin?
    var responseRoute: ResponseRoute?

    /// Creates an Update event.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   object type is not a valid event filter.
    public init(_ object: CoatyObject) throws {
        try EventValidation.checkObjectType(object)
        self.object = object
    }

    /// Answers this received Update. Enqueues the Complete and returns without suspending.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidResponse`` if the
    ///   Complete's object id differs from the Update's, ``CommunicationError/Code/notRunning`` if this
    ///   Update was not received by a manager.
    public func complete(_ complete: CompleteEvent) throws {
        if let reason = self.rejectionReason(for: complete) { throw CommunicationError(.invalidResponse, reason) }
        guard let route = self.responseRoute else {
            throw CommunicationError(.notRunning, "this Update was not received by a communication manager")
        }
        try route.send(.complete, try EventCoding.encode(complete.payload))
    }

    func rejectionReason(for complete: CompleteEvent) -> String? {
        complete.object.objectID == self.object.objectID
            ? nil : "completed object \(complete.object.objectID) is not the updated object \(self.object.objectID)"
    }

    /// The wire form: `{"object": …}`. An Update has no `privateData`; coaty-js reads only `object`
    /// (`UpdateEventData.createFrom`), so other keys, a `privateData` of any kind among them, are ignored.
    struct Payload: WirePayload {
        var object: CoatyObject

        enum CodingKeys: String, CodingKey { case object }

        init(object: CoatyObject) { self.object = object }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.object = try container.decodeObject(forKey: .object)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try self.object.encodeObject(into: &container, forKey: .object)
        }
    }

    var payload: Payload { Payload(object: self.object) }

    init(payload: Payload, origin: EventOrigin) throws(CommunicationError) {
        guard CoatyTopic.isValidEventFilter(payload.object.objectType) else {
            throw .invalid("objectType '\(payload.object.objectType)' is not a valid event filter")
        }
        self.object = payload.object
        self.origin = origin
    }
}

/// Complete: the answer to an ``UpdateEvent``, carrying the object as updated.
public struct CompleteEvent: Sendable {
    /// The updated object; its id must equal the Update's object id.
    public let object: CoatyObject
    /// Application data.
    public let privateData: [String: AnyCodable]?
    /// Where the event came from; `nil` for an event built locally.
    public internal(set) var origin: EventOrigin?

    /// Creates a Complete event.
    public init(_ object: CoatyObject, privateData: [String: AnyCodable]? = nil) {
        self.object = object
        self.privateData = privateData
    }

    var payload: AdvertiseEvent.Payload { AdvertiseEvent.Payload(object: self.object, privateData: self.privateData) }

    init(payload: AdvertiseEvent.Payload, origin: EventOrigin) {
        self.object = payload.object
        self.privateData = payload.privateData
        self.origin = origin
    }
}
