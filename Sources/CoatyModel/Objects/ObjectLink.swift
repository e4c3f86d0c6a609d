import Synchronization

/// A weak, immutable-by-identity link to another ``CoatyObject``, identified by its object id.
///
/// Use it for back references (a child's link to its parent) and any reference that may close a cycle.
/// On the Coaty wire it is just the target's object id string, like `parentObjectId`; resolve it with
/// ``resolve(in:)`` against an ``ObjectIdentityMap``. In a local object graph (``ObjectGraphEncoder``)
/// it is written as a reference to the target's table entry and resolved by the decoder.
///
/// The link never keeps its target alive; ``object`` is `nil` until resolved or after the target is gone.
public final class ObjectLink<Target: CoatyObject>: Codable, Sendable, CustomStringConvertible {
    private struct Storage {
        weak var object: Target?
    }

    /// The target's object id.
    public let objectID: ObjectID
    private let storage: Mutex<Storage>

    /// Creates a resolved link to `target`.
    public init(_ target: Target) {
        self.objectID = target.objectID
        self.storage = Mutex(Storage(object: target))
    }

    /// Creates an unresolved link to the object with `objectID`.
    public init(objectID: ObjectID) {
        self.objectID = objectID
        self.storage = Mutex(Storage(object: nil))
    }

    /// The target, if the link is resolved and the target is still alive.
    public var object: Target? {
        self.storage.withLock { $0.object }
    }

    /// Resolves the link against `map` if it is not resolved yet, and returns the target.
    @discardableResult
    public func resolve(in map: ObjectIdentityMap) -> Target? {
        self.storage.withLock { storage in
            if let object = storage.object { return object }
            storage.object = map.object(for: self.objectID) as? Target
            return storage.object
        }
    }

    /// Points the link at `object` if it is a `Target` with the link's id.
    ///
    /// Use it to close a cycle after both ends exist: create the child with ``init(objectID:)``, then the
    /// parent holding the child, then resolve the child's link to the parent.
    ///
    /// - Returns: Whether the link now points at `object` (`false` for another class or another id).
    @discardableResult
    public func resolve(to object: CoatyObject) -> Bool {
        guard let target = object as? Target, target.objectID == self.objectID else { return false }
        self.storage.withLock { $0.object = target }
        return true
    }

    /// Decodes the target's id, or a graph reference inside an object graph.
    ///
    /// - Throws: `DecodingError` if the id is not a non-empty string, or the graph reference is malformed.
    public init(from decoder: any Decoder) throws {
        let options = ObjectDecodingOptions.current(in: decoder)
        if let graph = options.graph {
            let index = try graph.referencedIndex(from: decoder)
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            self.objectID = try container.decode(ObjectID.self, forKey: AnyCodingKey("objectId"))
            self.storage = Mutex(Storage(object: nil))
            graph.registerLink(target: index, objectID: self.objectID, path: decoder.codingPath) { [self] target in
                self.resolve(to: target)
            }
            return
        }
        let container = try decoder.singleValueContainer()
        let objectID = try container.decode(ObjectID.self)
        guard !objectID.rawValue.isEmpty else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "object id must not be empty")
        }
        self.objectID = objectID
        self.storage = Mutex(Storage(object: nil))
    }

    /// Encodes the target's id, or a graph reference inside an object graph.
    ///
    /// - Throws: `EncodingError.invalidValue` inside an object graph when the target no longer exists.
    public func encode(to encoder: any Encoder) throws {
        if let graph = encoder.userInfo[.objectGraphEncodingState] as? ObjectGraphEncodingState {
            guard let target = self.object else {
                throw EncodingError.invalidValue(
                    self.objectID.rawValue,
                    EncodingError.Context(
                        codingPath: encoder.codingPath,
                        debugDescription: "link to '\(self.objectID)' is unresolved or its object no longer exists"
                    )
                )
            }
            try graph.encodeReference(to: target, strong: false, encoder: encoder)
            return
        }
        var container = encoder.singleValueContainer()
        try container.encode(self.objectID)
    }

    /// The target's id.
    public var description: String { "ObjectLink(\(self.objectID))" }
}
