/// An annotation (`coaty.Annotation`): a media item (text, image, document, …) attached to objects.
open class Annotation: CoatyObject, @unchecked Sendable {
    /// `coaty.Annotation`.
    override open class var objectType: String { CoreType.annotation.objectType }
    /// ``CoreType/annotation``.
    override public class var coreType: CoreType { .annotation }
    /// The annotation's own JSON keys.
    override open class var propertyKeys: Set<String> { Self.keys }
    private static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    /// The kind of media (`type` on the wire).
    public let annotationType: AnnotationType
    /// The object id of the creator.
    public let creatorID: ObjectID
    /// When the annotation was created, in milliseconds since the Unix epoch.
    public let creationTimestamp: Double
    /// Where the media is stored.
    public let status: AnnotationStatus
    /// The variants (for example resolutions) of the media.
    public let variants: [Variant]?

    /// One variant of an annotation's media.
    public struct Variant: Sendable, Hashable, Codable {
        /// A description of the variant, such as `"640x480"`; never empty.
        public var variant: String
        /// Where to download it.
        public var downloadURL: String

        /// Creates a variant.
        public init(variant: String, downloadURL: String) {
            self.variant = variant
            self.downloadURL = downloadURL
        }

        private enum CodingKeys: String, CodingKey {
            case variant, downloadURL = "downloadUrl"
        }

        /// Decodes a variant.
        ///
        /// - Throws: `DecodingError` if `variant` is missing or empty, or `downloadUrl` is not a string.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.variant = try container.decodeNonEmptyString(forKey: .variant)
            self.downloadURL = try container.decode(String.self, forKey: .downloadURL)
        }
    }

    /// Creates an annotation.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type; defaults to `coaty.Annotation`.
    ///   - objectID: The identity; defaults to a new random UUID.
    ///   - name: A human-readable name.
    ///   - annotationType: The kind of media.
    ///   - creatorID: Who created it.
    ///   - creationTimestamp: Creation time in milliseconds since the epoch.
    ///   - status: Where the media is stored.
    ///   - variants: The media variants.
    ///   - externalID: An identity in an external system.
    ///   - parentObjectID: The object this one belongs to.
    ///   - locationID: The location of this object.
    ///   - isDeactivated: Whether the object is deactivated.
    ///   - customProperties: Extra properties.
    public init(
        objectType: String? = nil,
        objectID: ObjectID = .random(),
        name: String,
        annotationType: AnnotationType,
        creatorID: ObjectID,
        creationTimestamp: Double,
        status: AnnotationStatus,
        variants: [Variant]? = nil,
        externalID: String? = nil,
        parentObjectID: ObjectID? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
        self.annotationType = annotationType
        self.creatorID = creatorID
        self.creationTimestamp = creationTimestamp
        self.status = status
        self.variants = variants
        super.init(
            objectType: objectType,
            objectID: objectID,
            name: name,
            externalID: externalID,
            parentObjectID: parentObjectID,
            locationID: locationID,
            isDeactivated: isDeactivated,
            customProperties: customProperties
        )
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case annotationType = "type", creatorID = "creatorId", creationTimestamp, status, variants
    }

    /// Decodes and validates an annotation as coaty-js does.
    ///
    /// - Throws: `DecodingError` naming the field: `type`/`status` missing or not a known number,
    ///   `creatorId` missing or empty, `creationTimestamp` not a number, a malformed variant, an optional
    ///   field `null`, or any base-field error.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.annotationType = try container.decode(AnnotationType.self, forKey: .annotationType)
        self.creatorID = try container.decodeNonEmptyID(forKey: .creatorID)
        self.creationTimestamp = try container.decode(Double.self, forKey: .creationTimestamp)
        self.status = try container.decode(AnnotationStatus.self, forKey: .status)
        self.variants = try container.decodeStrictIfPresent([Variant].self, forKey: .variants)
        try super.init(from: decoder)
    }

    /// Encodes the annotation; absent optionals are omitted.
    override open func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.annotationType, forKey: .annotationType)
        try container.encode(self.creatorID, forKey: .creatorID)
        try container.encodeNumber(self.creationTimestamp, forKey: .creationTimestamp)
        try container.encode(self.status, forKey: .status)
        try container.encodeIfPresent(self.variants, forKey: .variants)
    }
}
