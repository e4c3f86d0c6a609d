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
    /// The longest chain of strong references (and the deepest JSON nesting) accepted. Defaults to 256,
    /// which is also the most it accepts: decoding recurses once per reference, and a caller's 50,000
    /// overflowed the stack.
    public var maximumDepth: Int

    /// The longest chain of strong references accepted whatever ``maximumDepth`` says.
    static let depthCeiling = 256

    /// Creates a decoder.
    ///
    /// - Parameters:
    ///   - family: The object family. Defaults to the built-in types.
    ///   - factoryContext: Context for decoding factories.
    ///   - maximumDepth: The longest chain of strong references accepted, at most 256.
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
        let state = ObjectGraphDecodingState(entries: entries, maximumDepth: min(self.maximumDepth, Self.depthCeiling))
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
