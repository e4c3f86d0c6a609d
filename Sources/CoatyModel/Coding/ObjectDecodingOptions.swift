/// Per-decode settings for decoding Coaty objects: what to do with an array element that cannot be
/// decoded, whether objects with the same object id become one instance, and the context handed to
/// decoding factories.
///
/// Options travel in `decoder.userInfo` under `CodingUserInfoKey.objectDecodingOptions`, so
/// that every `decodeObject(from:)` call inside an event's `init(from:)` honours them.
/// ``CoatyJSONDecoder`` installs them for you; with another decoder, set
/// ``userInfo(family:)`` **once per decode**, because a fresh identity scope is made each time.
///
/// ```swift
/// let decoder = CoatyJSONDecoder(
///     family: [Light.self],
///     options: ObjectDecodingOptions(elementFailurePolicy: .skip { print("dropped", $0) }))
/// let lights = try decoder.decode([Light].self, from: payload)
/// ```
public struct ObjectDecodingOptions: Sendable {
    /// What happens to an element of an object array that cannot be decoded. Defaults to ``ElementFailurePolicy/fail``.
    public var elementFailurePolicy: ElementFailurePolicy
    /// Whether and how objects with equal object ids share one instance. Defaults to ``IdentityTracking/withinDecode``.
    public var identityTracking: IdentityTracking
    /// A value handed to every decoding factory of the ``ObjectFamily`` (for example a store). Defaults to `nil`.
    public var factoryContext: (any Sendable)?

    /// The identity scope of the current decode; set by ``userInfo(family:)``.
    var identityScope: IdentityScope?
    /// The object-graph state when decoding a local object graph.
    var graph: ObjectGraphDecodingState?

    /// Creates options.
    ///
    /// - Parameters:
    ///   - elementFailurePolicy: What to do with an array element that fails to decode.
    ///   - identityTracking: Whether objects with equal ids become one shared instance.
    ///   - factoryContext: The context for decoding factories.
    public init(
        elementFailurePolicy: ElementFailurePolicy = .fail,
        identityTracking: IdentityTracking = .withinDecode,
        factoryContext: (any Sendable)? = nil
    ) {
        self.elementFailurePolicy = elementFailurePolicy
        self.identityTracking = identityTracking
        self.factoryContext = factoryContext
    }

    /// The decoder user info for one decode with these options and `family`.
    ///
    /// Each call makes a fresh identity scope, so call it once per decode (per message) and assign the
    /// result to a `JSONDecoder`'s `userInfo` (or pass it to ``AnyCodable/decode(_:userInfo:)``).
    ///
    /// - Parameter family: The family that chooses the class of each object.
    /// - Returns: User info holding `family` and these options.
    public func userInfo(family: ObjectFamily) -> [CodingUserInfoKey: any Sendable] {
        [.objectFamily: family, .objectDecodingOptions: self.withFreshScope()]
    }

    /// These options with the identity scope of a new decode.
    func withFreshScope() -> ObjectDecodingOptions {
        var options = self
        options.identityScope = IdentityScope(tracking: self.identityTracking)
        return options
    }

    /// Runs `body`, a part of the decode whose objects share instances only among themselves (see
    /// ``IdentityScope/isolating(_:)``); without identity tracking, just runs it.
    func isolatingIdentities<Result>(_ body: () throws -> Result) rethrows -> Result {
        guard let scope = self.identityScope else { return try body() }
        return try scope.isolating(body)
    }

    /// The options stored in a decoder's user info, or the defaults (without identity tracking, since
    /// no per-decode scope exists).
    static func current(in decoder: any Decoder) -> ObjectDecodingOptions {
        // Our own decoder keeps them outside the dictionary, which it makes only when asked for.
        if let decoder = decoder as? JSONValueDecoder { return decoder.context.options ?? ObjectDecodingOptions() }
        return decoder.userInfo[.objectDecodingOptions] as? ObjectDecodingOptions ?? ObjectDecodingOptions()
    }
}

extension ObjectDecodingOptions {
    /// What happens to an element of a heterogeneous object array that cannot be decoded.
    ///
    /// Either way, one bad element never shifts or corrupts the others: elements are decoded one by one
    /// at their own index.
    public struct ElementFailurePolicy: Sendable {
        private enum Base: Sendable {
            case fail
            case skip(@Sendable (SkippedObject) -> Void)
        }

        private let base: Base

        /// The whole decode fails with the element's error; its coding path ends in the element's index.
        public static let fail = ElementFailurePolicy(base: .fail)

        /// The element is left out and `report` is called with its index and the reason.
        ///
        /// - Parameter report: Called synchronously, on the decoding thread, once per skipped element.
        public static func skip(report: @escaping @Sendable (SkippedObject) -> Void) -> ElementFailurePolicy {
            ElementFailurePolicy(base: .skip(report))
        }

        /// The report sink when elements are skipped, `nil` when decoding fails instead.
        var skipReport: (@Sendable (SkippedObject) -> Void)? {
            if case .skip(let report) = self.base { return report }
            return nil
        }
    }

    /// Whether objects with equal object ids decode to one shared instance.
    public struct IdentityTracking: Sendable {
        enum Base: Sendable {
            case disabled
            case withinDecode
            case across(ObjectIdentityMap)
        }

        let base: Base

        /// Every occurrence of an object becomes its own instance.
        public static let disabled = IdentityTracking(base: .disabled)

        /// Within one decode, objects with the same object id become one instance (the first decoded).
        public static let withinDecode = IdentityTracking(base: .withinDecode)

        /// Like ``withinDecode``, and across decodes through `map` (for example across messages).
        ///
        /// - Parameter map: The map that remembers instances; see ``ObjectIdentityMap`` for its policy.
        public static func across(_ map: ObjectIdentityMap) -> IdentityTracking {
            IdentityTracking(base: .across(map))
        }
    }

    /// An array element that was left out under ``ElementFailurePolicy/skip(report:)``.
    public struct SkippedObject: Sendable, CustomStringConvertible {
        /// The element's index in its JSON array.
        public let index: Int
        /// The coding path of the element, such as `objects[2]`.
        public let path: String
        /// Why it could not be decoded, usually a `DecodingError` naming the field and the reason.
        public let error: any Error

        /// Creates a report.
        public init(index: Int, path: String, error: any Error) {
            self.index = index
            self.path = path
            self.error = error
        }

        /// The path and the reason.
        public var description: String { "\(self.path): \(self.error)" }
    }
}

extension CodingUserInfoKey {
    /// The key under which decoders find the ``ObjectDecodingOptions`` of the current decode.
    public static let objectDecodingOptions = CodingUserInfoKey(rawValue: "coaty.objectDecodingOptions")!
}

extension CodingPathNode {
    /// Renders a coding path as `a.b[2].c`.
    static func render(_ path: [any CodingKey]) -> String {
        var result = ""
        for key in path {
            if let index = key.intValue {
                result += "[\(index)]"
            } else {
                result += result.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return result.isEmpty ? "<root>" : result
    }
}
