public import FoundationEssentials
import Synchronization

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
                        + " cannot be decoded; make one of these references an ObjectLink"))
        }
        let document: AnyCodable = ["coatyObjectGraph": 1, "objects": .array(entries)]
        let json = JSONEncoder()
        json.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try json.encode(document)
    }
}

/// The bookkeeping of one graph encode: the table of objects and the strong edges between them.
final class ObjectGraphEncodingState: Sendable {
    private struct State {
        var indices: [ObjectIdentifier: Int] = [:]
        var objects: [CoatyObject] = []
        var current = 0
        var strongEdges: [Int: [Int]] = [:]
    }

    private let state = Mutex(State())

    func index(for object: CoatyObject) -> Int {
        self.state.withLock { state in
            if let index = state.indices[ObjectIdentifier(object)] { return index }
            state.objects.append(object)
            state.indices[ObjectIdentifier(object)] = state.objects.count - 1
            return state.objects.count - 1
        }
    }

    func object(at index: Int) -> CoatyObject? {
        self.state.withLock { index < $0.objects.count ? $0.objects[index] : nil }
    }

    func setCurrent(_ index: Int) {
        self.state.withLock { $0.current = index }
    }

    /// Writes `{"$ref": n}` (plus `objectId` for links) for `object`, adding it to the table.
    func encodeReference(to object: CoatyObject, strong: Bool, encoder: any Encoder) throws {
        let index = self.index(for: object)
        if strong {
            self.state.withLock { $0.strongEdges[$0.current, default: []].append(index) }
        }
        var container = encoder.container(keyedBy: ObjectFamily.DiscriminatorKeys.self)
        try container.encode(index, forKey: .reference)
        if !strong {
            var extra = encoder.container(keyedBy: AnyCodingKey.self)
            try extra.encode(object.objectID, forKey: AnyCodingKey("objectId"))
        }
    }

    /// A cycle of strong references, as table indices, if there is one.
    func strongCycle() -> [Int]? {
        let edges = self.state.withLock { $0.strongEdges }
        var color: [Int: Int] = [:]  // 1 = on the stack, 2 = done
        var stack: [Int] = []
        func visit(_ node: Int) -> [Int]? {
            color[node] = 1
            stack.append(node)
            for next in edges[node] ?? [] {
                if color[next] == 1, let start = stack.firstIndex(of: next) { return Array(stack[start...]) + [next] }
                if color[next] == nil, let cycle = visit(next) { return cycle }
            }
            stack.removeLast()
            color[node] = 2
            return nil
        }
        for node in edges.keys.sorted() where color[node] == nil {
            if let cycle = visit(node) { return cycle }
        }
        return nil
    }
}

extension CodingUserInfoKey {
    /// Marks an encode as part of an object graph.
    static let objectGraphEncodingState = CodingUserInfoKey(rawValue: "coaty.objectGraphEncodingState")!
}
