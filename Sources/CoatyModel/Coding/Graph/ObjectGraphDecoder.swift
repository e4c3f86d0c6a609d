import FoundationEssentials
import Synchronization

/// Decodes object graphs written by ``ObjectGraphEncoder``, rebuilding shared instances and cycles.
///
/// Decoding is two-phase (see ``ObjectGraphEncoder`` for the format and the design): every table
/// entry is decoded once, following strong references depth-first; then every ``ObjectLink`` is resolved.
/// Malformed input is an error, never a crash: a reference that is out of range, points at an object of
/// the wrong class, forms a strong cycle or nests deeper than ``maximumDepth``, and a link whose
/// `objectId` does not match its target.
public struct ObjectGraphDecoder: Sendable {
    /// The classes and factories objects decode into.
    public var family: ObjectFamily
    /// Context handed to decoding factories.
    public var factoryContext: (any Sendable)?
    /// The longest chain of strong references (and the deepest JSON nesting) accepted. Defaults to 256.
    public var maximumDepth: Int

    /// Creates a decoder.
    ///
    /// - Parameters:
    ///   - family: The object family. Defaults to the built-in types.
    ///   - factoryContext: Context for decoding factories.
    ///   - maximumDepth: The longest chain of strong references accepted.
    public init(family: ObjectFamily = ObjectFamily(), factoryContext: (any Sendable)? = nil, maximumDepth: Int = 256) {
        self.family = family
        self.factoryContext = factoryContext
        self.maximumDepth = maximumDepth
    }

    /// Decodes a graph.
    ///
    /// - Parameter json: The text written by ``ObjectGraphEncoder/encode(_:)``.
    /// - Returns: The graph; keep it (or its objects) alive, since links are weak.
    /// - Throws: `DecodingError` naming the path (`objects[3].children[0]`) and the reason.
    public func decode(from json: some Collection<UInt8>) throws -> ObjectGraph {
        let document = try JSONParser.parse(json, maximumDepth: self.maximumDepth)
        guard document["coatyObjectGraph"] == 1 else {
            throw Self.corrupted([], "not a Coaty object graph (missing \"coatyObjectGraph\": 1)")
        }
        guard case .array(let entries) = document["objects"], !entries.isEmpty else {
            throw Self.corrupted([AnyCodingKey("objects")], "expected a non-empty array of objects")
        }
        var options = ObjectDecodingOptions(identityTracking: .disabled, factoryContext: self.factoryContext)
        let state = ObjectGraphDecodingState(entries: entries, maximumDepth: self.maximumDepth)
        options.graph = state
        for index in entries.indices {
            _ = try state.object(at: index, family: self.family, options: options, depth: 0)
        }
        let objects = try state.finish()
        return ObjectGraph(objects: objects)
    }

    static func corrupted(_ path: [any CodingKey], _ reason: String) -> DecodingError {
        DecodingDiagnostics.note()
        return DecodingError.dataCorrupted(DecodingError.Context(codingPath: path, debugDescription: reason))
    }
}

/// The objects of a decoded graph; holds every object strongly.
public struct ObjectGraph: Sendable {
    /// Every object of the graph, in table order.
    public let objects: [CoatyObject]

    /// The root object (the first in the table).
    public var root: CoatyObject { self.objects[0] }

    /// Creates a graph from decoded objects; `objects` must not be empty.
    init(objects: [CoatyObject]) {
        self.objects = objects
    }
}

/// The bookkeeping of one graph decode.
final class ObjectGraphDecodingState: Sendable {
    private struct PendingLink: Sendable {
        let target: Int
        let objectID: ObjectID
        let path: String
        let resolve: @Sendable (CoatyObject) -> Bool
    }

    private struct State {
        var decoded: [CoatyObject?]
        var inProgress: Set<Int> = []
        var depth = 0
        var links: [PendingLink] = []
    }

    private let entries: [AnyCodable]
    private let maximumDepth: Int
    private let state: Mutex<State>

    init(entries: [AnyCodable], maximumDepth: Int) {
        self.entries = entries
        self.maximumDepth = maximumDepth
        self.state = Mutex(State(decoded: Array(repeating: nil, count: entries.count)))
    }

    /// Reads a `{"$ref": n}` value and returns table entry `n`, decoding it first if needed.
    func decodeReference(from decoder: any Decoder, family: ObjectFamily, options: ObjectDecodingOptions) throws
        -> CoatyObject
    {
        let index = try self.referencedIndex(from: decoder)
        return try self.object(at: index, family: family, options: options, depth: self.state.withLock { $0.depth })
    }

    func referencedIndex(from decoder: any Decoder) throws -> Int {
        let container = try decoder.container(keyedBy: ObjectFamily.DiscriminatorKeys.self)
        guard container.contains(.reference) else {
            throw ObjectGraphDecoder.corrupted(decoder.codingPath, "expected a reference {\"$ref\": <index>}")
        }
        let index = try container.decode(Int.self, forKey: .reference)
        guard self.entries.indices.contains(index) else {
            throw ObjectGraphDecoder.corrupted(
                decoder.codingPath + [ObjectFamily.DiscriminatorKeys.reference],
                "reference \(index) is out of range (the graph has \(self.entries.count) objects)")
        }
        return index
    }

    func object(at index: Int, family: ObjectFamily, options: ObjectDecodingOptions, depth: Int) throws -> CoatyObject {
        enum Next { case done(CoatyObject), decode, cycle, tooDeep }
        let next: Next = self.state.withLock { state in
            if let object = state.decoded[index] { return .done(object) }
            if state.inProgress.contains(index) { return .cycle }
            if state.depth >= self.maximumDepth { return .tooDeep }
            state.inProgress.insert(index)
            state.depth += 1
            return .decode
        }
        let path: [any CodingKey] = [AnyCodingKey("objects"), AnyCodingKey(index: index)]
        switch next {
        case .done(let object): return object
        case .cycle: throw ObjectGraphDecoder.corrupted(path, "strong reference cycle through objects[\(index)]")
        case .tooDeep:
            throw ObjectGraphDecoder.corrupted(path, "references nest deeper than \(self.maximumDepth)")
        case .decode: break
        }
        defer { self.state.withLock { $0.depth -= 1 } }
        let decoder = JSONValueDecoder(
            value: self.entries[index], node: .prefix(path),
            userInfo: [.objectFamily: family, .objectDecodingOptions: options])
        let object = try family.decodeNewObject(from: decoder, options: options)
        self.state.withLock { state in
            state.decoded[index] = object
            state.inProgress.remove(index)
        }
        return object
    }

    /// Remembers a link to resolve once every object is decoded.
    func registerLink(
        target: Int, objectID: ObjectID, path: [any CodingKey], resolve: @escaping @Sendable (CoatyObject) -> Bool
    ) {
        let link = PendingLink(target: target, objectID: objectID, path: CodingPathNode.render(path), resolve: resolve)
        self.state.withLock { $0.links.append(link) }
    }

    /// Resolves the links and returns every object.
    func finish() throws -> [CoatyObject] {
        let (decoded, links) = self.state.withLock { ($0.decoded, $0.links) }
        let objects = decoded.compactMap { $0 }
        guard objects.count == decoded.count else {
            throw ObjectGraphDecoder.corrupted([AnyCodingKey("objects")], "not every object could be decoded")
        }
        for link in links {
            let target = objects[link.target]
            guard target.objectID == link.objectID else {
                throw ObjectGraphDecoder.corrupted(
                    [], "\(link.path): link names objectId '\(link.objectID)' but objects[\(link.target)] is '\(target.objectID)'")
            }
            guard link.resolve(target) else {
                throw ObjectGraphDecoder.corrupted(
                    [], "\(link.path): link target objects[\(link.target)] has the wrong class \(type(of: target))")
            }
        }
        return objects
    }
}
