public import CoatyModel

/// Deadvertise: announces that objects are gone. Also the agent's unjoin event and last will.
public struct DeadvertiseEvent: Sendable {
    /// The ids of the objects that are gone.
    public let objectIDs: [ObjectID]
    /// Where the event came from; `nil` for an event built locally.
    public internal(set) var origin: EventOrigin?

    /// Creates a Deadvertise event.
    ///
    /// - Parameter objectIDs: The ids of the objects that are gone.
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if an id is empty.
    public init(objectIDs: [ObjectID]) throws {
        if objectIDs.contains(where: { $0.rawValue.isEmpty }) {
            throw CommunicationError(.invalidArgument, "object ids must not be empty")
        }
        self.objectIDs = objectIDs
    }

    struct Payload: WirePayload {
        var objectIds: [ObjectID]

        enum CodingKeys: String, CodingKey { case objectIds }

        init(objectIds: [ObjectID]) { self.objectIds = objectIds }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let ids = try container.decodeNonEmptyStrings(forKey: .objectIds)
            guard let ids else {
                throw DecodingError.keyNotFound(
                    CodingKeys.objectIds,
                    .init(codingPath: [], debugDescription: "objectIds is required")
                )
            }
            self.objectIds = ids.map { ObjectID($0) }
        }
    }

    var payload: Payload { Payload(objectIds: self.objectIDs) }

    init(payload: Payload, origin: EventOrigin) {
        self.objectIDs = payload.objectIds
        self.origin = origin
    }
}
