public import CoatyModel

/// Where a received event came from. `nil` on events built locally for publishing.
public struct EventOrigin: Sendable, Hashable {
    /// The topic the event was received on.
    public var topic: String
    /// The publisher's identity id (for IO values: the IO source id, or `nil` on an external route).
    public var sourceID: ObjectID?
    /// The correlation id of a two-way event.
    public var correlationID: ObjectID?
    /// The namespace the event was published in (`nil` on non-Coaty topics).
    public var namespace: String?

    /// Creates an origin.
    public init(topic: String, sourceID: ObjectID?, correlationID: ObjectID? = nil, namespace: String? = nil) {
        self.topic = topic
        self.sourceID = sourceID
        self.correlationID = correlationID
        self.namespace = namespace
    }
}

/// Sends a response to a received request; attached to incoming requests by the manager.
struct ResponseRoute: Sendable {
    let correlationID: ObjectID
    let send: @Sendable (_ code: EventCode, _ payload: [UInt8]) throws(CommunicationError) -> Void
}

/// An event's wire payload: encoded to and decoded from JSON.
///
/// A payload of a common shape may also read and write its JSON tree directly, without `Decoder`
/// and `Encoder` containers: for the small payloads of a request and its response, the containers
/// took most of the coding time (see Docs/Benchmarks.md). The direct forms must give what the
/// `Codable` ones give, and may decline any input; `Codable` then handles it and reports its errors.
protocol WirePayload: Codable, Sendable {
    /// The payload read from its parsed JSON, or `nil` to decode it with `init(from:)`.
    static func decodeDirectly(_ tree: AnyCodable) -> Self?
    /// The payload's JSON text written with `encoder` directly, or `nil` to encode it with
    /// `encode(to:)`.
    func encodeDirectly(with encoder: CoatyJSONEncoder) throws -> [UInt8]?
}

extension WirePayload {
    static func decodeDirectly(_ tree: AnyCodable) -> Self? { nil }
    func encodeDirectly(with encoder: CoatyJSONEncoder) throws -> [UInt8]? { nil }
}

extension CommunicationError {
    static func invalid(_ message: String) -> CommunicationError {
        CommunicationError(.invalidEvent, message)
    }
}

/// Validation shared by events.
package enum EventValidation {
    static func checkObjectType(_ object: CoatyObject) throws(CommunicationError) {
        guard CoatyTopic.isValidEventFilter(object.objectType) else {
            throw CommunicationError(
                .invalidArgument,
                "objectType '\(object.objectType)' must be non-empty and must not contain '/', '+', '#' or U+0000"
            )
        }
    }

    package static func checkFilterName(_ name: String, _ what: String) throws(CommunicationError) {
        guard CoatyTopic.isValidEventFilter(name) else {
            throw CommunicationError(
                .invalidArgument,
                "\(what) '\(name)' must be non-empty and must not contain '/', '+', '#' or U+0000"
            )
        }
    }
}
