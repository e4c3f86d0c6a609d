/// The base class of every object exchanged between Coaty agents.
///
/// An object is one flat JSON object on the wire: the base fields below, the fields of its subclass,
/// and any custom properties. Objects are immutable; to change one, make a new object with the same
/// ``objectID``.
///
/// ## Subclassing
///
/// Subclass `CoatyObject`, or the class of the core type you specialise (``CoatyTask`` for a task,
/// ``IOSource``, ``Sensor``, …): the core type comes with the class, with its fields and validation, so
/// an agent that does not know your class still decodes your object as that core type. Subclasses:
/// - override the class property ``objectType-swift.type.property`` with a unique, namespaced name such
///   as `"com.example.Light"` (the `coaty.` prefix is reserved);
/// - declare only immutable (`let`) stored properties of `Sendable` types;
/// - add the JSON keys they decode and encode themselves to ``propertyKeys``
///   (`super.propertyKeys.union(["urgency"])`), so that those keys are not also kept as
///   ``customProperties``;
/// - restate `@unchecked Sendable`, implement `init(from:)` and `encode(to:)`, and call `super` on the
///   same decoder or encoder, so that all properties share one flat JSON object. The property helpers
///   `decoder.decodeProperty(_:)` and `encoder.encodeProperty(_:forKey:)` make each field one line;
/// - decode and encode object-valued properties through those helpers or with
///   `decodeObject(_:forKey:)`/`encodeObject(_:forKey:)` (and the array variants), so that they decode
///   polymorphically and take part in identity tracking and object graphs; use ``ObjectLink`` for back
///   references that could close a cycle.
///
/// ```swift
/// final class HelloWorldTask: CoatyTask, @unchecked Sendable {
///     override class var objectType: String { "com.helloworld.HelloWorldTask" }
///     override class var propertyKeys: Set<String> { super.propertyKeys.union(["urgency"]) }
///     let urgency: Int
///
///     init(name: String, creatorID: ObjectID, urgency: Int) {
///         self.urgency = urgency
///         super.init(name: name, status: .request, creatorID: creatorID, creationTimestamp: 1_700_000_000_000)
///     }
///     required init(from decoder: any Decoder) throws {
///         self.urgency = try decoder.decodeProperty("urgency")
///         try super.init(from: decoder)
///     }
///     override func encode(to encoder: any Encoder) throws {
///         try super.encode(to: encoder)
///         try encoder.encodeProperty(self.urgency, forKey: "urgency")
///     }
/// }
/// ```
///
/// ## Validation
///
/// Decoding validates as coaty-js does (COATY-PROTOCOL §3) and throws `DecodingError` whose coding path
/// names the field and whose description gives the reason. Optional fields are omitted when absent and
/// **rejected** when `null`, as in coaty-js.
///
/// - Important: `CoatyObject` is `@unchecked Sendable` because Swift cannot check `Sendable` for
///   non-final classes. Immutability of every stored property is the invariant that makes this safe.
open class CoatyObject: Codable, @unchecked Sendable {
    /// The object type that instances of this class carry by default, and under which an
    /// ``ObjectFamily`` registers the class.
    open class var objectType: String { CoreType.coatyObject.objectType }

    /// The core type that instances of this class carry.
    ///
    /// It comes with the class a subclass extends and cannot be overridden outside this module: to
    /// specialise a core type, subclass its class (``CoatyTask`` for `Task`), so that the object has the
    /// fields that core type promises.
    public class var coreType: CoreType { .coatyObject }

    /// The JSON keys this class and its superclasses below `CoatyObject` decode and encode themselves.
    ///
    /// Every other key beyond the base fields is kept in ``customProperties``. Overrides should add to
    /// `super.propertyKeys`.
    open class var propertyKeys: Set<String> { [] }

    /// The object's type name on the wire, for example `"coaty.Task"` or `"com.example.Light"`.
    ///
    /// It usually equals the class's ``objectType-swift.type.property``, but an object of a type the
    /// decoding ``ObjectFamily`` does not know is decoded as the class of its core type and keeps its own
    /// object type here.
    public let objectType: String
    /// The core type this object specialises.
    public let coreType: CoreType
    /// The object's unique identity.
    public let objectID: ObjectID
    /// A human-readable name. May be empty.
    public let name: String
    /// An identity of this object in an external system.
    public let externalID: String?
    /// The object this one belongs to, for example the agent identity that advertised it.
    public let parentObjectID: ObjectID?
    /// The ``Location`` object that describes where this object is.
    public let locationID: ObjectID?
    /// Whether the object is deactivated.
    public let isDeactivated: Bool?
    /// Properties of the JSON object that its class does not declare. They travel unchanged.
    public let customProperties: [String: AnyCodable]

    /// Creates an object.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type. Defaults to the class's object type.
    ///   - objectID: The identity. Defaults to a new random UUID.
    ///   - name: A human-readable name.
    ///   - externalID: An identity in an external system.
    ///   - parentObjectID: The object this one belongs to.
    ///   - locationID: The location of this object.
    ///   - isDeactivated: Whether the object is deactivated.
    ///   - customProperties: Extra properties; keys that the class declares are ignored when encoding.
    public init(
        objectType: String? = nil,
        objectID: ObjectID = .random(),
        name: String,
        externalID: String? = nil,
        parentObjectID: ObjectID? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
        self.objectType = objectType ?? Self.objectType
        self.coreType = Self.coreType
        self.objectID = objectID
        self.name = name
        self.externalID = externalID
        self.parentObjectID = parentObjectID
        self.locationID = locationID
        self.isDeactivated = isDeactivated
        self.customProperties = customProperties
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case objectType
        case coreType
        case objectID = "objectId"
        case name
        case externalID = "externalId"
        case parentObjectID = "parentObjectId"
        case locationID = "locationId"
        case isDeactivated
    }

    static let baseKeys: Set<String> = Set(CodingKeys.allCases.map(\.rawValue))

    /// Decodes the base fields and keeps every undeclared key in ``customProperties``.
    ///
    /// - Throws: `DecodingError` naming the field and the reason when a base field is missing or
    ///   invalid: `objectType` empty, `coreType` unknown or not this class's core type, `objectId` empty,
    ///   `parentObjectId`, `externalId` or `locationId` present but empty or `null`.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let objectType = try container.decode(String.self, forKey: .objectType)
        guard !objectType.isEmpty else {
            throw DecodingError.dataCorruptedError(
                forKey: .objectType,
                in: container,
                debugDescription: "objectType must not be empty"
            )
        }
        let coreTypeName = try container.decode(String.self, forKey: .coreType)
        guard let coreType = CoreType(rawValue: coreTypeName) else {
            throw DecodingError.dataCorruptedError(
                forKey: .coreType,
                in: container,
                debugDescription: "unknown core type '\(coreTypeName)'"
            )
        }
        // Before the core-type check: a Task decoded as a plain CoatyObject is a lost subclass, not a
        // core-type mismatch, and the error should say how to decode it.
        if !ChosenClassDecoder.isMarked(decoder) {
            try Self.checkKeepsClass(objectType: objectType, coreType: coreType, decoder: decoder)
        }
        guard coreType == Self.coreType else {
            throw DecodingError.dataCorruptedError(
                forKey: .coreType,
                in: container,
                debugDescription: "core type '\(coreTypeName)' does not match \(Self.self) (\(Self.coreType.rawValue))"
            )
        }
        let objectID = try container.decode(ObjectID.self, forKey: .objectID)
        guard !objectID.rawValue.isEmpty else {
            throw DecodingError.dataCorruptedError(
                forKey: .objectID,
                in: container,
                debugDescription: "objectId must not be empty"
            )
        }
        self.objectType = objectType
        self.coreType = coreType
        self.objectID = objectID
        self.name = try container.decode(String.self, forKey: .name)
        self.externalID = try Self.decodeNonEmpty(String.self, .externalID, in: container) { $0.isEmpty }
        self.parentObjectID = try Self.decodeNonEmpty(ObjectID.self, .parentObjectID, in: container) {
            $0.rawValue.isEmpty
        }
        self.locationID = try Self.decodeNonEmpty(ObjectID.self, .locationID, in: container) { $0.rawValue.isEmpty }
        self.isDeactivated = try container.decodeStrictIfPresent(Bool.self, forKey: .isDeactivated)

        self.customProperties = try Self.decodeCustomProperties(from: decoder)
    }

    /// Throws if the decoder's ``ObjectFamily`` decodes this object as a subclass of `Self`: then
    /// `init(from:)` was called directly (by synthesized `Codable` or a generic `Decodable` under a
    /// decoder other than ``CoatyJSONDecoder``), and the object would silently lose its class.
    ///
    /// ``ObjectFamily`` marks the decoders it hands to the class it chose (``ChosenClassDecoder``), so
    /// only a direct call pays this lookup in the family.
    private static func checkKeepsClass(objectType: String, coreType: CoreType, decoder: any Decoder) throws {
        guard let chosen = ObjectFamily.current(in: decoder).chosenClass(objectType: objectType, coreType: coreType),
            ObjectIdentifier(chosen) != ObjectIdentifier(Self.self), chosen is Self.Type
        else { return }
        DecodingDiagnostics.note()
        throw DecodingError.typeMismatch(
            Self.self,
            DecodingError.Context(
                codingPath: decoder.codingPath,
                debugDescription: "object type '\(objectType)' decodes as \(chosen) in this decoder's object family, "
                    + "but \(Self.self).init(from:) was called directly (synthesized Codable or a generic Decodable "
                    + "under a decoder other than CoatyJSONDecoder), which would lose the subclass. Decode it "
                    + "with container.decodeObject(\(Self.self).self, forKey:), decoder.decodeProperty(_:) or "
                    + "ObjectFamily.decodeObject(from:), or decode with CoatyJSONDecoder, which keeps the subclass"
            )
        )
    }

    /// Collects every key that neither the base class nor ``propertyKeys`` declares.
    private static func decodeCustomProperties(from decoder: any Decoder) throws -> [String: AnyCodable] {
        let declared = Self.propertyKeys
        if let decoder = decoder as? JSONValueDecoder, case .object(let members) = decoder.value {
            var custom: [String: AnyCodable] = [:]
            // Room for all members: growing as keys arrive would rehash the table several times.
            custom.reserveCapacity(members.count)
            for (key, value) in members where !Self.baseKeys.contains(key) && !declared.contains(key) {
                custom[key] = value
            }
            return custom
        }
        let all = try decoder.container(keyedBy: AnyCodingKey.self)
        var custom: [String: AnyCodable] = [:]
        for key in all.allKeys where !Self.baseKeys.contains(key.stringValue) && !declared.contains(key.stringValue) {
            custom[key.stringValue] = try all.decode(AnyCodable.self, forKey: key)
        }
        return custom
    }

    /// Encodes the custom properties (in key order), then the base fields; absent optionals are omitted,
    /// never `null`.
    open func encode(to encoder: any Encoder) throws {
        if !self.customProperties.isEmpty {
            let declared = Self.propertyKeys
            var all = encoder.container(keyedBy: AnyCodingKey.self)
            // In key order, not the dictionary's, which differs from process to process.
            for (key, value) in JSONKeyOrder.sorted(self.customProperties)
            where !Self.baseKeys.contains(key) && !declared.contains(key) {
                try all.encode(value, forKey: AnyCodingKey(key))
            }
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.objectType, forKey: .objectType)
        try container.encode(self.coreType, forKey: .coreType)
        try container.encode(self.objectID, forKey: .objectID)
        try container.encode(self.name, forKey: .name)
        try container.encodeIfPresent(self.externalID, forKey: .externalID)
        try container.encodeIfPresent(self.parentObjectID, forKey: .parentObjectID)
        try container.encodeIfPresent(self.locationID, forKey: .locationID)
        try container.encodeIfPresent(self.isDeactivated, forKey: .isDeactivated)
    }

    /// Decodes an optional field that, when present, must be neither `null` nor empty (coaty-js rejects both).
    static func decodeNonEmpty<Value: Decodable>(
        _ type: Value.Type,
        _ key: CodingKeys,
        in container: KeyedDecodingContainer<CodingKeys>,
        isEmpty: (Value) -> Bool
    ) throws -> Value? {
        guard let value = try container.decodeStrictIfPresent(Value.self, forKey: key) else { return nil }
        if isEmpty(value) {
            throw DecodingError.dataCorruptedError(
                forKey: key,
                in: container,
                debugDescription: "\(key.rawValue) must not be empty"
            )
        }
        return value
    }
}
