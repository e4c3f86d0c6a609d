/// A join condition of a Query event: asks the responder to attach related objects to each result,
/// sent as `{"localProperty": …, "asProperty": …, "isLocalPropertyArray"?: …, "isOneToOneRelation"?: …}`.
///
/// The responder decides where related objects come from; ``resolve(in:related:relatedProperty:)``
/// implements coaty-js's in-memory semantics over a collection.
public struct ObjectJoinCondition: Sendable, Hashable, Codable {
    /// The property of each result whose value (or, with ``isLocalPropertyArray``, whose elements)
    /// identifies related objects.
    public var localProperty: String
    /// The property of each result under which the related objects are attached.
    public var asProperty: String
    /// Whether ``localProperty`` holds an array of values, each identifying one related object.
    public var isLocalPropertyArray: Bool?
    /// Whether at most one object is related: it is then attached as a single object, not an array.
    public var isOneToOneRelation: Bool?

    /// Creates a join condition.
    ///
    /// - Parameters:
    ///   - localProperty: The property identifying related objects.
    ///   - asProperty: The property to attach them under.
    ///   - isLocalPropertyArray: Whether `localProperty` holds an array.
    ///   - isOneToOneRelation: Whether one object (not an array) is attached.
    public init(
        localProperty: String,
        asProperty: String,
        isLocalPropertyArray: Bool? = nil,
        isOneToOneRelation: Bool? = nil
    ) {
        self.localProperty = localProperty
        self.asProperty = asProperty
        self.isLocalPropertyArray = isLocalPropertyArray
        self.isOneToOneRelation = isOneToOneRelation
    }

    private enum CodingKeys: String, CodingKey {
        case localProperty
        case asProperty
        case isLocalPropertyArray
        case isOneToOneRelation
    }

    /// Decodes and validates a join condition as coaty-js's `areObjectJoinConditionsValid` does.
    ///
    /// - Throws: `DecodingError` if the value is not an object, `localProperty` or `asProperty` is not
    ///   a string, or a flag is present but not a boolean (also `null`).
    public init(from decoder: any Decoder) throws {
        let container = try FilterParser.filterContainer(decoder, keyedBy: CodingKeys.self)
        self.localProperty = try container.decode(String.self, forKey: .localProperty)
        self.asProperty = try container.decode(String.self, forKey: .asProperty)
        self.isLocalPropertyArray = try FilterParser.decodeFlag(container, forKey: .isLocalPropertyArray)
        self.isOneToOneRelation = try FilterParser.decodeFlag(container, forKey: .isOneToOneRelation)
    }

    /// Encodes the condition, omitting absent flags.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.localProperty, forKey: .localProperty)
        try container.encode(self.asProperty, forKey: .asProperty)
        try container.encodeIfPresent(self.isLocalPropertyArray, forKey: .isLocalPropertyArray)
        try container.encodeIfPresent(self.isOneToOneRelation, forKey: .isOneToOneRelation)
    }
}
