import CoatyModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// JSON encoding and decoding of event payloads in coaty-js's wire form.
package enum EventCoding {
    /// Encodes a payload as compact UTF-8 JSON without escaping `/`, with the package's own encoder
    /// (``CoatyJSONEncoder``): about 0.6× the time of `JSONEncoder` for the same values.
    package static func encode<Payload: Encodable>(_ payload: Payload) throws(CommunicationError) -> [UInt8] {
        do {
            return try CoatyJSONEncoder().encodeBytes(payload)
        } catch {
            throw Self.encodingFailure(error)
        }
    }

    /// Encodes an event payload, directly when it can (``WirePayload/encodeDirectly(with:)``).
    static func encode<Payload: WirePayload>(_ payload: Payload) throws(CommunicationError) -> [UInt8] {
        do {
            let encoder = CoatyJSONEncoder()
            return try payload.encodeDirectly(with: encoder) ?? encoder.encodeBytes(payload)
        } catch {
            throw Self.encodingFailure(error)
        }
    }

    private static func encodingFailure(_ error: any Error) -> CommunicationError {
        CommunicationError(.invalidEvent, "cannot encode event data: \(error)", underlying: error)
    }

    /// Decodes an event payload, decoding objects with `family`; directly when the payload can
    /// (``WirePayload/decodeDirectly(_:)``).
    static func decode<Payload: WirePayload>(
        _ type: Payload.Type,
        from bytes: [UInt8],
        family: ObjectFamily
    ) throws(CommunicationError) -> Payload {
        do {
            let decoder = CoatyJSONDecoder(family: family)
            let tree = try AnyCodable(json: bytes, maximumDepth: decoder.maximumDepth)
            return try Payload.decodeDirectly(tree) ?? decoder.decode(Payload.self, fromValue: tree)
        } catch let error as CommunicationError {
            throw error
        } catch {
            throw CommunicationError(.invalidEvent, Self.describe(error), underlying: error)
        }
    }

    /// A short, human-readable description of a decoding error with its coding path.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "payload" : keys.joined(separator: ".")
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context)): expected \(type); \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            return "\(path(context)): missing \(type) value; \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context)): missing key '\(key.stringValue)'"
        case .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}

/// Coding keys for any JSON key.
struct DynamicKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { self.stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer {
    /// Decodes one Coaty object through the decoder's object family.
    func decodeObject(forKey key: Key) throws -> CoatyObject {
        try self.decodeObject(CoatyObject.self, forKey: key)
    }

    /// Decodes an array of Coaty objects through the decoder's object family.
    func decodeObjects(forKey key: Key) throws -> [CoatyObject] {
        try self.decodeObjects([CoatyObject].self, forKey: key)
    }

    /// Decodes private data, which must be a JSON object when present (never `null`).
    func decodePrivateData(forKey key: Key) throws -> [String: AnyCodable]? {
        guard self.contains(key) else { return nil }
        return try self.decode([String: AnyCodable].self, forKey: key)
    }

    /// Decodes an array of non-empty strings.
    func decodeNonEmptyStrings(forKey key: Key) throws -> [String]? {
        guard self.contains(key) else { return nil }
        let values = try self.decode([String].self, forKey: key)
        if values.contains(where: \.isEmpty) {
            throw DecodingError.dataCorruptedError(
                forKey: key,
                in: self,
                debugDescription: "\(key.stringValue) must contain non-empty strings"
            )
        }
        return values
    }

    /// Decodes a non-empty string.
    func decodeNonEmptyString(forKey key: Key) throws -> String? {
        guard self.contains(key) else { return nil }
        let value = try self.decode(String.self, forKey: key)
        if value.isEmpty {
            throw DecodingError.dataCorruptedError(
                forKey: key,
                in: self,
                debugDescription: "\(key.stringValue) must not be empty"
            )
        }
        return value
    }
}

extension CoatyObject {
    /// Encodes this object polymorphically into a keyed container.
    func encodeObject<Key: CodingKey>(into container: inout KeyedEncodingContainer<Key>, forKey key: Key) throws {
        try self.encode(to: container.superEncoder(forKey: key))
    }
}

extension Array where Element == CoatyObject {
    /// Encodes objects polymorphically into a keyed container as a JSON array.
    func encodeObjects<Key: CodingKey>(into container: inout KeyedEncodingContainer<Key>, forKey key: Key) throws {
        var array = container.nestedUnkeyedContainer(forKey: key)
        for object in self { try object.encode(to: array.superEncoder()) }
    }
}
