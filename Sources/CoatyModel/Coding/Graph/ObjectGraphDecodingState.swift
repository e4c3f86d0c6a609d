import Synchronization

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
                "reference \(index) is out of range (the graph has \(self.entries.count) objects)"
            )
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
            value: self.entries[index],
            node: .prefix(path),
            context: DecodingUserInfo([.objectFamily: family, .objectDecodingOptions: options])
        )
        let object = try family.decodeNewObject(from: decoder, options: options)
        self.state.withLock { state in
            state.decoded[index] = object
            state.inProgress.remove(index)
        }
        return object
    }

    /// Remembers a link to resolve once every object is decoded.
    func registerLink(
        target: Int,
        objectID: ObjectID,
        path: [any CodingKey],
        resolve: @escaping @Sendable (CoatyObject) -> Bool
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
                    [],
                    "\(link.path): link names objectId '\(link.objectID)' "
                        + "but objects[\(link.target)] is '\(target.objectID)'"
                )
            }
            guard link.resolve(target) else {
                throw ObjectGraphDecoder.corrupted(
                    [],
                    "\(link.path): link target objects[\(link.target)] has the wrong class \(type(of: target))"
                )
            }
        }
        return objects
    }
}
