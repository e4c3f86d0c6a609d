#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Encodes an object graph with shared objects and cycles for local persistence (not for the Coaty wire).
///
/// ## Design
///
/// Coaty objects are immutable (`let` properties), so a cycle can never be made of strong references
/// alone: an object cannot hold a strong reference to an object that is created after it. Cycles
/// therefore go through ``ObjectLink``, a weak link that is filled in after its target exists. The
/// graph coder uses that split as a **two-phase decode**:
///
/// 1. Every object is written once into a flat, readable table (`"objects"`, the root first). Wherever
///    an object is referenced, through a strong property (encoded with
///    `KeyedEncodingContainer.encodeObject(_:forKey:)`) or through an ``ObjectLink``, the JSON holds
///    `{"$ref": <index>}` instead (links add the target's `objectId`).
/// 2. Decoding builds each table entry once, depth-first along strong references, so shared objects
///    become shared instances; then it resolves every ``ObjectLink`` to its target.
///
/// A cycle of strong references cannot be rebuilt, so the encoder rejects it at encode time; a link
/// whose target has been deallocated is rejected too.
///
/// ```json
/// {"coatyObjectGraph": 1, "objects": [
///   {"objectType": "com.example.Folder", "name": "root", "children": [{"$ref": 1}], …},
///   {"objectType": "com.example.File", "name": "a.txt", "folder": {"$ref": 0, "objectId": "…"}, …}
/// ]}
/// ```
public struct ObjectGraphEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// Encodes the graph reachable from `root` (through strong properties and links).
    ///
    /// - Parameter root: The object written first.
    /// - Returns: Pretty-printed JSON with sorted keys.
    /// - Throws: `EncodingError.invalidValue` for a cycle of strong references (naming the objects on it)
    ///   or a link whose target no longer exists; any error an object's `encode(to:)` throws.
    public func encode(_ root: CoatyObject) throws -> Data {
        let state = ObjectGraphEncodingState()
        _ = state.index(for: root)
        var entries: [AnyCodable] = []
        let encoder = CoatyJSONEncoder(userInfo: [.objectGraphEncodingState: state])
        var index = 0
        while let object = state.object(at: index) {
            state.setCurrent(index)
            entries.append(try JSONParser.parse(try encoder.encode(object)))
            index += 1
        }
        if let cycle = state.strongCycle() {
            let description = cycle.map { "objects[\($0)] (\(state.object(at: $0)?.objectID.rawValue ?? "?"))" }
            throw EncodingError.invalidValue(
                root,
                EncodingError.Context(
                    codingPath: [],
                    debugDescription: "strong reference cycle " + description.joined(separator: " → ")
                        + " cannot be decoded; make one of these references an ObjectLink"
                )
            )
        }
        let document: AnyCodable = ["coatyObjectGraph": 1, "objects": .array(entries)]
        let json = JSONEncoder()
        json.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try json.encode(document)
    }
}

extension CodingUserInfoKey {
    /// Marks an encode as part of an object graph.
    static let objectGraphEncodingState = CodingUserInfoKey(rawValue: "coaty.objectGraphEncodingState")!
}
