public import CoatyModel

/// Associate: an IO router tells an IO source and an IO actor of an IO context which route to use,
/// or (without a route) that their association ended.
public struct AssociateEvent: Sendable, Hashable {
    /// The IO context name, the event filter of the topic (`ASC:<ioContextName>`).
    public let ioContextName: String
    /// The IO source.
    public let ioSourceID: ObjectID
    /// The IO actor.
    public let ioActorID: ObjectID
    /// The topic IO values travel on; `nil` to disassociate. A received route is only known to be
    /// non-empty: as in coaty-js, a route that is no valid topic name still associates (observing or
    /// publishing on it then fails).
    public let associatingRoute: String?
    /// The recommended update rate in milliseconds.
    public let updateRate: Int?
    /// Where the event came from; `nil` for an event built locally.
    public internal(set) var origin: EventOrigin?

    /// Creates an Associate event.
    ///
    /// - Parameters:
    ///   - ioContextName: The IO context name.
    ///   - ioSourceID: The IO source.
    ///   - ioActorID: The IO actor.
    ///   - associatingRoute: The route, or `nil` to disassociate.
    ///   - updateRate: The recommended update rate in milliseconds.
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   context name is not a valid event filter, an id is empty, or the route is not a valid topic name.
    public init(
        ioContextName: String,
        ioSourceID: ObjectID,
        ioActorID: ObjectID,
        associatingRoute: String? = nil,
        updateRate: Int? = nil
    ) throws {
        try EventValidation.checkFilterName(ioContextName, "IO context name")
        if let reason = Self.invalidReason(ioSourceID, ioActorID, associatingRoute) {
            throw CommunicationError(.invalidArgument, reason)
        }
        self.ioContextName = ioContextName
        self.ioSourceID = ioSourceID
        self.ioActorID = ioActorID
        self.associatingRoute = associatingRoute
        self.updateRate = updateRate
    }

    /// Why the ids or the route are invalid, or `nil`. An inbound Associate (`checkingRoute: false`)
    /// only needs a non-empty route, as in coaty-js (`AssociateEventData`); one built here must have a
    /// route that can be published on.
    static func invalidReason(
        _ source: ObjectID,
        _ actor: ObjectID,
        _ route: String?,
        checkingRoute: Bool = true
    ) -> String? {
        if source.rawValue.isEmpty || actor.rawValue.isEmpty { return "ioSourceId and ioActorId must not be empty" }
        if let route, route.isEmpty { return "associatingRoute must not be empty" }
        if checkingRoute, let route, !IOValueEvent.isValidRoute(route) {
            return "associatingRoute '\(route)' is not a valid topic name"
        }
        return nil
    }

    struct Payload: WirePayload {
        var ioSourceId: ObjectID
        var ioActorId: ObjectID
        var associatingRoute: String?
        var updateRate: Int?

        enum CodingKeys: String, CodingKey { case ioSourceId, ioActorId, associatingRoute, updateRate }

        init(ioSourceId: ObjectID, ioActorId: ObjectID, associatingRoute: String?, updateRate: Int?) {
            self.ioSourceId = ioSourceId
            self.ioActorId = ioActorId
            self.associatingRoute = associatingRoute
            self.updateRate = updateRate
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.ioSourceId = ObjectID(try container.decodeNonEmptyString(forKey: .ioSourceId) ?? "")
            self.ioActorId = ObjectID(try container.decodeNonEmptyString(forKey: .ioActorId) ?? "")
            self.associatingRoute = try container.decodeNonEmptyString(forKey: .associatingRoute)
            if container.contains(.updateRate) {
                let rate = try container.decode(Double.self, forKey: .updateRate)
                guard rate.isFinite, abs(rate) < 1e15 else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .updateRate,
                        in: container,
                        debugDescription: "updateRate out of range"
                    )
                }
                self.updateRate = Int(rate.rounded())
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.ioSourceId, forKey: .ioSourceId)
            try container.encode(self.ioActorId, forKey: .ioActorId)
            try container.encodeIfPresent(self.associatingRoute, forKey: .associatingRoute)
            try container.encodeIfPresent(self.updateRate, forKey: .updateRate)
        }
    }

    var payload: Payload {
        Payload(
            ioSourceId: self.ioSourceID,
            ioActorId: self.ioActorID,
            associatingRoute: self.associatingRoute,
            updateRate: self.updateRate
        )
    }

    init(ioContextName: String, payload: Payload, origin: EventOrigin) throws(CommunicationError) {
        if let reason = Self.invalidReason(
            payload.ioSourceId,
            payload.ioActorId,
            payload.associatingRoute,
            checkingRoute: false
        ) {
            throw .invalid(reason)
        }
        self.ioContextName = ioContextName
        self.ioSourceID = payload.ioSourceId
        self.ioActorID = payload.ioActorId
        self.associatingRoute = payload.associatingRoute
        self.updateRate = payload.updateRate
        self.origin = origin
    }
}
